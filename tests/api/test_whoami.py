"""GET /v1/whoami: what the presented key may do, as the console's sign-in shows it (both databases)."""

from __future__ import annotations

from tests.api.conftest import ClientFactory, add_claims
from tests.api.test_security import ADMIN, new_key


def test_whoami_names_the_key_its_scope_and_corpora(make_client: ClientFactory) -> None:
    client = make_client(auth="required", admin_api_key="admin-from-env")
    client.headers.update(ADMIN)
    add_claims(client)
    del client.headers["Authorization"]
    assert client.get("/v1/whoami", headers=ADMIN).json() == {
        "key_id": None, "name": None, "scope": "admin", "corpora": None, "auth": "required"
    }  # fmt: skip
    created = client.post(
        "/admin/keys", json={"scope": "read", "corpora": ["claims"], "name": "desk"}, headers=ADMIN
    ).json()
    me = client.get("/v1/whoami", headers={"X-API-Key": created["key"]}).json()
    assert me == {"key_id": created["id"], "name": "desk", "scope": "read", "corpora": ["claims"],
                  "auth": "required"}  # fmt: skip
    writer = client.get("/v1/whoami", headers=new_key(client, "write")).json()
    assert writer["scope"] == "write" and writer["corpora"] is None
    missing = client.get("/v1/whoami")
    assert missing.status_code == 401 and missing.json()["field"] == "Authorization"
    wrong = client.get("/v1/whoami", headers={"Authorization": "Bearer prk_000000000000_" + "x" * 43})
    assert wrong.status_code == 401 and "invalid" in wrong.json()["detail"]


def test_with_auth_disabled_no_key_is_the_anonymous_writer_and_a_wrong_key_is_refused(
    make_client: ClientFactory,
) -> None:
    client = make_client(admin_api_key="s3cret")
    assert client.get("/v1/whoami").json() == {
        "key_id": None, "name": None, "scope": "write", "corpora": None, "auth": "disabled"
    }  # fmt: skip
    assert client.get("/v1/whoami", headers={"X-API-Key": "s3cret"}).json()["scope"] == "admin"
    # A sign-in with a mistyped key fails, though the routes are open.
    wrong = client.get("/v1/whoami", headers={"X-API-Key": "s3cre"})
    assert wrong.status_code == 401 and wrong.json()["field"] == "Authorization"
