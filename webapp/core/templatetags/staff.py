"""Staff see and may change every user's items: each item that is not theirs is marked, in lists and
on its page, so that nothing of another user is silently mixed with their own (issue 27)."""

from __future__ import annotations

from django import template
from django.db.models import Model
from django.utils.html import format_html

from webapp.core.permissions import Viewer

register = template.Library()


def owner_of(obj: Model) -> object:
    """The item's owner, following its OWNER_FIELD path (a study's is its experiment's owner)."""
    value: object = obj
    for name in getattr(type(obj), "OWNER_FIELD", "owner").split("__"):
        value = getattr(value, name, None)
    return value


def _shared(obj: Model) -> bool:
    value: object = obj
    for name in getattr(type(obj), "SHARED_FIELD", "shared").split("__"):
        value = getattr(value, name, None)
    return bool(value)


def seen_as_staff(obj: Model, user: Viewer) -> bool:
    """Whether ``user`` sees ``obj`` only because they are staff... or sees another's item at all."""
    owner = owner_of(obj)
    return bool(user.is_authenticated and user.is_staff and owner is not None
                and getattr(owner, "pk", None) != user.pk)


@register.simple_tag(takes_context=True)
def staff_marker(context: template.Context, obj: Model) -> str:
    """A tag after an item's name in a list: "not yours" (and "private" when only staff may see it)."""
    user = context.get("user")
    if user is None or not seen_as_staff(obj, user):
        return ""
    owner = getattr(owner_of(obj), "username", "?")
    if _shared(obj):
        return format_html('<span class="tag staff-marker" title="{}’s, shared: everybody sees it">not yours</span>',
                           owner)
    return format_html('<span class="tag staff-marker private" title="{}’s private item: you see it because you '
                       'are staff">not yours · private</span>', owner)


@register.simple_tag(takes_context=True)
def staff_banner(context: template.Context, obj: Model) -> str:
    """A line at the top of an item's page when it is another user's: whose, and that staff may change it."""
    user = context.get("user")
    if user is None or not seen_as_staff(obj, user):
        return ""
    owner = getattr(owner_of(obj), "username", "?")
    if _shared(obj):
        return format_html('<p class="notice staff-marker">This is {}’s (shared). As staff you may change or delete '
                           'it.</p>', owner)
    return format_html('<p class="notice staff-marker private">This is {}’s <strong>private</strong> item: only its '
                       'owner and staff see it. As staff you may change or delete it; its owner is not told.</p>',
                       owner)


@register.simple_tag(takes_context=True)
def staff_list_note(context: template.Context) -> str:
    """Under a list's heading, for staff: the list holds every user's items."""
    user = context.get("user")
    if user is None or not (user.is_authenticated and user.is_staff):
        return ""
    return format_html('<p class="muted staff-marker">As staff you see every user’s items here; those that are not '
                       'yours are marked “not yours”.</p>')
