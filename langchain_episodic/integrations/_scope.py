"""Which namespace a run belongs to, from LangGraph's runtime: memory per user.

A multi-user agent serves every user from one compiled graph; LangGraph passes each
run's ``context`` (``agent.invoke(..., context=Context(user_id="alice"))``) to
middleware and tools through the ``Runtime``. A `NamespaceScope` says how a
run's namespace follows from it:

* a template over the context's fields, ``"user-{user_id}"`` (the context may be a
  dict, a dataclass, a pydantic model or any object with those attributes);
* a callable ``(runtime) -> str``.

A run whose context lacks a field the template names (or holds one that is not a
string), or whose callable returns no usable namespace, fails with an
`EpisodicValueError` that says so: it is never recalled for,
nor recorded in, a shared namespace instead.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

from langchain_episodic._validation import describe, encodes
from langchain_episodic.errors import EpisodicValueError

__all__ = ["NamespaceScope", "check_scope", "resolve_namespace"]

NamespaceScope = str | Callable[[Any], str]
"""A template over ``runtime.context`` fields (``"user-{user_id}"``) or ``(runtime) -> str``."""

_MISSING = object()


def check_scope(scope: object, name: str = "namespace") -> NamespaceScope:
    """``scope`` if it is a usable `NamespaceScope`; otherwise raise naming it.

    Raises:
        TypeError: ``scope`` is neither a string nor callable.
        EpisodicValueError: The template names no field, or is malformed.
    """
    if callable(scope):
        return scope
    if not isinstance(scope, str):
        msg = f"{name}={scope!r} is invalid: must be a template string or a callable"
        raise TypeError(msg)
    fields = _template_fields(scope, name)
    if not fields:
        msg = (
            f"{name}={scope!r} names no runtime.context field (e.g. 'user-{{user_id}}'): "
            "for one fixed namespace, give the memory that namespace instead"
        )
        raise EpisodicValueError(msg)
    return scope


def _template_fields(template: str, name: str = "namespace") -> list[str]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as error:
        msg = f"{name}={template!r} is not a valid template: {error}"
        raise EpisodicValueError(msg) from None
    fields = []
    for _, field, spec, conversion in parsed:
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            msg = (
                f"{name}={template!r} is invalid: {{{field}}} must name a context field, "
                "plainly (no index, attribute, format or conversion)"
            )
            raise EpisodicValueError(msg)
        fields.append(field)
    return fields


def resolve_namespace(scope: NamespaceScope, runtime: object, name: str = "namespace") -> str:
    """The namespace of the run whose LangGraph runtime is ``runtime``.

    Examples:
        >>> from types import SimpleNamespace
        >>> resolve_namespace("user-{user_id}", SimpleNamespace(context={"user_id": "alice"}))
        'user-alice'
        >>> try:
        ...     resolve_namespace("user-{user_id}", SimpleNamespace(context={}))
        ... except EpisodicValueError as error:
        ...     print(str(error)[:73])
        namespace='user-{user_id}' needs runtime.context field 'user_id', but the

    Raises:
        EpisodicValueError: A field is missing or empty, or the namespace is unusable.
    """
    if callable(scope):
        namespace = scope(runtime)
        source = f"{name}={getattr(scope, '__name__', scope)!r} returned"
    else:
        context = getattr(runtime, "context", None)
        values = {}
        for field in _template_fields(scope, name):
            if isinstance(context, Mapping):
                value = context.get(field, _MISSING)
            else:  # a dataclass, a pydantic model, any object with the attribute
                value = _MISSING if context is None else getattr(context, field, _MISSING)
            if value is _MISSING or value is None or not str(value).strip():
                found = (
                    "this run has no context: invoke with context=..."
                    if context is None
                    else f"the run's context {describe(context)} has "
                    + ("no such field" if value is _MISSING else f"{field}={value!r}")
                )
                msg = (
                    f"{name}={scope!r} needs runtime.context field {field!r}, but {found} "
                    "(nothing is recalled or recorded in a shared namespace instead)"
                )
                raise EpisodicValueError(msg)
            if not isinstance(value, str):
                # 123 and "123", or True and "True", would share a namespace: say so.
                msg = (
                    f"{name}={scope!r} needs runtime.context field {field!r} to be a "
                    f"string, but it is {value!r} ({type(value).__name__}): convert it "
                    f"yourself (str({field})), so that no two users share a namespace by "
                    "accident (nothing is recalled or recorded)"
                )
                raise EpisodicValueError(msg)
            values[field] = value
        namespace = scope.format(**values)
        source = f"{name}={scope!r} gave"
    if not isinstance(namespace, str) or not namespace.strip() or not encodes(namespace):
        msg = f"{source} {describe(namespace)}: a {name} must be a non-empty string"
        raise EpisodicValueError(msg)
    return namespace
