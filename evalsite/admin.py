"""Django's user admin, for superusers only.

A staff user given `auth.change_user` could otherwise set any user's password (an approver's
included, then sign in as them and approve) or make themselves superuser: nothing may create
ground truth around an approver, so only superusers add, change or delete users. Staff with
`auth.view_user` still see them.
"""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin

User = get_user_model()


class SuperuserOnlyUserAdmin(UserAdmin):
    def has_add_permission(self, request):
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_superuser


admin.site.unregister(User)
admin.site.register(User, SuperuserOnlyUserAdmin)
