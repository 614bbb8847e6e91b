"""Who may see and change what.

Every owned model names the path to its owner and its "shared" flag (OWNER_FIELD, SHARED_FIELD);
a Run, for example, is owned through its experiment. Staff see and change everything. Objects
someone may not see are reported as missing (404), never as forbidden, so ids leak nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias, TypeVar

from django.db.models import Model, Q, QuerySet
from django.http import Http404

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

M = TypeVar("M", bound=Model)
#: who asks: a request's user, signed in or not
Viewer: TypeAlias = "User | AnonymousUser"
#: an object's id as a request gives it (a bad one means "no such object")
Pk: TypeAlias = "int | str | None"


def _queryset(qs_or_model: QuerySet[M] | type[M]) -> QuerySet[M]:
    return qs_or_model if isinstance(qs_or_model, QuerySet) else qs_or_model._default_manager.all()


def _fields(model: type[Model]) -> tuple[str, str]:
    return getattr(model, "OWNER_FIELD", "owner"), getattr(model, "SHARED_FIELD", "shared")


def visible_to(qs_or_model: QuerySet[M] | type[M], user: Viewer) -> QuerySet[M]:
    """The objects `user` may view: their own, everybody's shared ones; staff see all."""
    qs = _queryset(qs_or_model)
    if not user.is_authenticated:
        return qs.none()
    if user.is_staff:
        return qs
    owner, shared = _fields(qs.model)
    return qs.filter(Q(**{owner: user}) | Q(**{shared: True}))


def owned_by(qs_or_model: QuerySet[M] | type[M], user: Viewer) -> QuerySet[M]:
    """The objects `user` may change, delete or re-run: their own; staff change all."""
    qs = _queryset(qs_or_model)
    if not user.is_authenticated:
        return qs.none()
    if user.is_staff:
        return qs
    owner, _ = _fields(qs.model)
    return qs.filter(**{owner: user})


def get_visible_or_404(qs_or_model: QuerySet[M] | type[M], user: Viewer, pk: Pk) -> M:
    try:
        return visible_to(qs_or_model, user).get(pk=pk)
    except (_queryset(qs_or_model).model.DoesNotExist, ValueError, TypeError):
        raise Http404("No such object.") from None


def get_owned_or_404(qs_or_model: QuerySet[M] | type[M], user: Viewer, pk: Pk) -> M:
    try:
        return owned_by(qs_or_model, user).get(pk=pk)
    except (_queryset(qs_or_model).model.DoesNotExist, ValueError, TypeError):
        raise Http404("No such object.") from None


def can_change(obj: Model, user: Viewer) -> bool:
    """Whether `user` may change `obj` (as owned_by says); without a query when the object names its
    owner directly (every page that shows an object asks this)."""
    if not user.is_authenticated:
        return False
    if user.is_staff:
        return True
    owner, _ = _fields(type(obj))
    if "__" not in owner:
        return getattr(obj, f"{owner}_id") == user.pk
    return owned_by(type(obj), user).filter(pk=obj.pk).exists()
