"""Which rows of the site admin a staff user sees and changes.

Every ModelAdmin of the site is one of two kinds (tests/test_admin_scope.py walks the registry,
so a new one cannot slip through unscoped):

- `ProjectScoped`: the rows of the projects the user administers (their `admin` role), found
  through `project_path`, the lookup from a row to its project; superusers see every row. Staff
  in no project see nothing. Choices in its forms (a foreign key, a many-to-many) and its
  list filters offer only rows the user may see too: a select of every project would name them.
- `SuperuserOnly`: rows that belong to no project (model prices, API tokens, groups, lockouts,
  task results): superusers only, to see as well as to change.

Admin permissions are per model (Django's); this adds the per-project half. The user admin
(evalsite/admin.py) shows staff the members of their projects, and changes are superusers'.
History tables' admins are `ReadOnlyAdmin`: view only, for superusers too.
"""

from django.contrib import admin
from django.contrib.admin import RelatedOnlyFieldListFilter
from django.contrib.contenttypes.models import ContentType
from django.contrib.contenttypes.views import shortcut
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_safe

from reviews.models import Project, Role


def administered(user):
    """The projects `user` is an admin of."""
    return Project.objects.filter(memberships__user=user, memberships__role=Role.ADMIN)


def _superuser(request) -> bool:
    return bool(request.user.is_active and request.user.is_superuser)


class Scoped:
    """What both kinds share: form choices and list filters come from the rows the user may see
    (another registered admin's `get_queryset`), never from the whole table."""

    def visible(self, rows, request):
        raise NotImplementedError

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        return rows if _superuser(request) else self.visible(rows, request)

    def _choices(self, db_field, request, kwargs):
        related = self.admin_site._registry.get(db_field.related_model)
        if not _superuser(request) and isinstance(related, Scoped):
            kwargs["queryset"] = related.get_queryset(request)
        return kwargs

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        return super().formfield_for_foreignkey(
            db_field, request, **self._choices(db_field, request, kwargs)
        )

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        return super().formfield_for_manytomany(
            db_field, request, **self._choices(db_field, request, kwargs)
        )

    def get_list_filter(self, request):
        """A relation's filter lists every row of the related table (every project's name, every
        criterion): for staff, only those present in the rows they see, and none across two
        relations (`criterion__name` reads the whole related table)."""
        filters = super().get_list_filter(request)
        if _superuser(request):
            return filters
        scoped = []
        for entry in filters:
            if isinstance(entry, str) and "__" in entry:
                continue
            if isinstance(entry, str) and self.model._meta.get_field(entry).is_relation:
                entry = (entry, RelatedOnlyFieldListFilter)
            scoped.append(entry)
        return scoped


class ProjectScoped(Scoped):
    project_path = "project"

    def visible(self, rows, request):
        inside = self.model._default_manager.filter(
            **{f"{self.project_path}__in": administered(request.user)}
        )
        return rows.filter(pk__in=inside.values("pk"))


class SuperuserOnly(Scoped):
    def visible(self, rows, request):
        return rows.none()

    def has_module_permission(self, request):
        return _superuser(request)

    def has_view_permission(self, request, obj=None):
        return _superuser(request) and super().has_view_permission(request, obj)

    def has_add_permission(self, request, *args):
        return _superuser(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return _superuser(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return _superuser(request) and super().has_delete_permission(request, obj)


@require_safe
def view_on_site(request, content_type_id, object_id):
    """The admin's "view on site" redirect, for rows the user may see only: Django's own
    (`/admin/r/<type>/<id>/`) redirects any staff user, so trying ids would name every project's
    slug. evalsite/urls.py routes that path here, before the admin's own."""
    model = get_object_or_404(ContentType, pk=content_type_id).model_class()
    model_admin = admin.site._registry.get(model)
    try:
        seen = model_admin is not None and model_admin.get_queryset(request).filter(pk=object_id)
        if not seen or not seen.exists():
            raise Http404("No such row in the projects you administer.")
    except (ValueError, ValidationError):  # not an id of that table
        raise Http404("No such row.") from None
    return shortcut(request, content_type_id, object_id)


class ReadOnly:
    """No add, change or delete here (for superusers too); view only."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnly, admin.ModelAdmin):
    pass


class ActorForm:
    """The admin's form knows who is saving (`form.actor`): its checks are the service's, which
    depend on that user's roles."""

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.actor = request.user
        return form
