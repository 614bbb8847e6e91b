from django.contrib import admin

from webapp.preview.models import MachineFile, Preview, QueueFile

admin.site.register(MachineFile)
admin.site.register(QueueFile)
admin.site.register(Preview)
