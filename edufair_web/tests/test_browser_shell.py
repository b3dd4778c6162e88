"""In Chromium: each demo user logs in and sees their home; Swagger UI renders with the network cut."""

import pytest

from conftest import browser_login
from edufair_web.accounts.demo import DEMO_USERS, demo_users_seed

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_each_demo_user_logs_in_and_sees_their_next_steps(page):
    demo_users_seed()
    for username, role, password in DEMO_USERS:
        page.context.clear_cookies()
        browser_login(page, username, password)
        assert page.locator(".whoami").inner_text().startswith(f"{username} · {role}")
        assert page.locator("h1").inner_text() == f"Welcome, {username}"
        admin_link = page.locator('nav a[href="/admin/"]')
        assert admin_link.count() == (1 if role in ("researcher", "operator") else 0)
        # The navigation fits one line at 1280 px (a researcher's many links sit in one menu per app).
        page.set_viewport_size({"width": 1280, "height": 800})
        assert page.locator(".topbar").bounding_box()["height"] < 50, role
        if role == "researcher":
            page.locator(".nav-menu summary", has_text="Annotation").click()
            page.get_by_role("link", name="Judge validation").click()
            page.wait_for_url("**/annotation/judge-validation/")


def test_swagger_ui_renders_offline(page, researcher):
    outside = []

    def only_this_server(route):
        url = route.request.url
        if "://localhost" in url or "://127.0.0.1" in url:
            return route.continue_()
        outside.append(url)
        return route.abort()

    page.route("**/*", only_this_server)
    browser_login(page, researcher.username)
    page.goto("/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=20000)
    assert "EduFair Web API" in page.locator(".swagger-ui .title").inner_text()
    assert outside == [], f"Swagger UI tried to reach the internet: {outside}"
