"""What experiments announce to the apps above them (dashboards, ...), which listen, so that
experiments never imports them."""

from django.dispatch import Signal

#: sent from the worker after an experiment's last unfinished run ended with at least one run done
#: (not for a study's experiment: its points are plotted from summaries); argument ``experiment``
experiment_finished = Signal()
