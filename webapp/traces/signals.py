"""What traces announce to the apps above them (dashboards, ...), which listen, so that traces never
imports them."""

from django.dispatch import Signal

#: sent from the quick worker once a trace is parsed (status ready); argument ``trace``
trace_parsed = Signal()
