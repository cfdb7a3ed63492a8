from django.urls import path

from judging import views

urlpatterns = [
    path("dashboards/", views.dashboards, name="dashboards"),
]
