from tests.webapp.api.conftest import api  # noqa: F401 - alice's token client
