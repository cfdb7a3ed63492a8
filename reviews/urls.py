from django.urls import path

from reviews.views import members, projects, queue, tokens

urlpatterns = [
    path("projects/", projects.project_list, name="project_list"),
    path("projects/new/", projects.project_new, name="project_new"),
    path("p/<slug:slug>/", projects.project_home, name="project_home"),
    path("p/<slug:slug>/members/", members.members, name="members"),
    path("p/<slug:slug>/members/<int:user_pk>/remove/", members.member_remove, name="member_remove"),
    path("queue/", queue.my_queue, name="my_queue"),
    path("p/<slug:slug>/review/next/", queue.review_next, name="review_next"),
    path("account/tokens/", tokens.api_tokens, name="api_tokens"),
    path("account/tokens/<int:pk>/revoke/", tokens.api_token_revoke, name="api_token_revoke"),
]
