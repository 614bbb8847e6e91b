"""Staff see and may change every user's items: each item that is not theirs is marked, in lists and
on its page, so that nothing of another user is silently mixed with their own (issue 27)."""

from __future__ import annotations

from django import template
from django.db.models import Model
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from webapp.core.permissions import Viewer

register = template.Library()

# What each tag shows of another user's item, shared or private ({} is its owner's name).
NOTICES = {
    "marker": {
        True: '<span class="tag staff-marker" title="{}’s, shared: everybody sees it">not yours</span>',
        False: '<span class="tag staff-marker private" title="{}’s private item: you see it because you are '
               'staff">not yours · private</span>',
    },
    "banner": {
        True: '<p class="notice staff-marker">This is {}’s (shared). As staff you may change or delete it.</p>',
        False: '<p class="notice staff-marker private">This is {}’s <strong>private</strong> item: only its owner '
               'and staff see it. As staff you may change or delete it; its owner is not told.</p>',
    },
}


def follow(obj: Model, path_attribute: str, default: str) -> object:
    """The value at the model's field path named by ``path_attribute`` (OWNER_FIELD, SHARED_FIELD:
    a study's owner is its experiment's), ``default`` when the model names none."""
    value: object = obj
    for name in getattr(type(obj), path_attribute, default).split("__"):
        value = getattr(value, name, None)
    return value


def owner_of(obj: Model) -> object:
    return follow(obj, "OWNER_FIELD", "owner")


def seen_as_staff(obj: Model, user: Viewer) -> bool:
    """Whether ``user`` is staff looking at another user's item."""
    owner = owner_of(obj)
    return bool(user.is_authenticated and user.is_staff and owner is not None
                and getattr(owner, "pk", None) != user.pk)


def notice(context: template.Context, obj: Model, kind: str) -> SafeString | str:
    """The ``kind`` notice (NOTICES) for ``obj`` when the viewer is staff and it is another's, else ""."""
    user = context.get("user")
    if user is None or not seen_as_staff(obj, user):
        return ""
    shared = bool(follow(obj, "SHARED_FIELD", "shared"))
    return format_html(NOTICES[kind][shared], getattr(owner_of(obj), "username", "?"))


@register.simple_tag(takes_context=True)
def staff_marker(context: template.Context, obj: Model) -> str:
    """A tag after an item's name in a list: "not yours" (and "private" when only staff may see it)."""
    return notice(context, obj, "marker")


@register.simple_tag(takes_context=True)
def staff_banner(context: template.Context, obj: Model) -> str:
    """A line at the top of an item's page when it is another user's: whose, and that staff may change it."""
    return notice(context, obj, "banner")


@register.simple_tag(takes_context=True)
def staff_list_note(context: template.Context) -> str:
    """Under a list's heading, for staff: the list holds every user's items."""
    user = context.get("user")
    if user is None or not (user.is_authenticated and user.is_staff):
        return ""
    return mark_safe('<p class="muted staff-marker">As staff you see every user’s items here; those that are not '
                     'yours are marked “not yours”.</p>')  # a constant: nothing to escape
