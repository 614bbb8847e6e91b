"""What traces announce to the apps above them (dashboards, ...), which listen, so that traces never
imports them."""

from django.dispatch import Signal

#: sent from the quick worker once a trace is parsed and its columnar cache written, just before its
#: status says ready; argument ``trace`` (its ``cache`` set). Receivers run inside the parse task.
trace_parsed = Signal()
