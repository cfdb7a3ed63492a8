"""The admins of other apps' models, narrowed like ours (evalsite/admin_scope.py).

Users: a staff user given `auth.change_user` could otherwise set any user's password (an
approver's included, then sign in as them and approve) or make themselves superuser: nothing
may create ground truth around an approver, so only superusers add, change or delete users.
Staff with `auth.view_user` see the members of the projects they administer.

Groups, lockouts (django-axes) and task results belong to no project: superusers only.
"""

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group
from django_tasks_db.models import DBTaskResult

from evalsite.admin_scope import Scoped, SuperuserOnly, administered
from reviews.models import Membership

User = get_user_model()


class SuperuserOnlyUserAdmin(Scoped, UserAdmin):
    def visible(self, rows, request):
        members = Membership.objects.filter(project__in=administered(request.user))
        return rows.filter(pk__in=members.values("user"))

    def has_add_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser


admin.site.unregister(User)
admin.site.register(User, SuperuserOnlyUserAdmin)

for model in (Group, AccessAttempt, AccessLog, AccessFailureLog, DBTaskResult):
    registered = type(admin.site.get_model_admin(model))
    admin.site.unregister(model)
    admin.site.register(model, type(registered.__name__, (SuperuserOnly, registered), {}))
