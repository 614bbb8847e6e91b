"""A form page's answer: the object saved from a valid POST and its page, else the form again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.db.models import Model
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render


def form_page(request: HttpRequest, form: ModelForm, template: str, context: dict[str, Any],
              saved: str | Callable[[Any], str], *, owned: bool = False, invalid_status: int = 400) -> HttpResponse:
    """A valid POST: the form saved (``owned``: a new object, the user's), ``saved`` said (a text, or
    one made from the object) and the object's page. Else ``template`` with the form and ``context``
    (``invalid_status`` after a POST the form refused)."""
    if request.method == "POST":
        if form.is_valid():
            obj: Model
            if owned:
                obj = form.save(commit=False)
                obj.owner = request.user                 # type: ignore[attr-defined]
                obj.save()
            else:
                obj = form.save()
            messages.success(request, saved(obj) if callable(saved) else saved)
            return redirect(obj)
        return render(request, template, {"form": form, **context}, status=invalid_status)
    return render(request, template, {"form": form, **context})
