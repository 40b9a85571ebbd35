// The official Python client (Debian's python3-kubernetes, run with /usr/bin/python3) against
// kubesched-testapi: see python_client_check.py for what it checks.

#include <catch2/catch.hpp>
#include <string>

#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"

namespace kubesched::testapi {
namespace {

constexpr char kPython[] = "/usr/bin/python3";

bool PythonClientAvailable() {
  auto result =
      testing::RunCommand({.argv = {kPython, "-c", "import kubernetes"}}, absl::Seconds(30));
  return result.ok() && result->exit_code == 0;
}

TEST_CASE("the Python Kubernetes client works against kubesched-testapi", "[testapi][e2e]") {
  if (!PythonClientAvailable()) {
    FAIL(
        "/usr/bin/python3 cannot import kubernetes (scripts/install-deps.sh --test installs "
        "python3-kubernetes)");
  }
  auto server = TestApiProcess::Start({"--history", "5"});
  REQUIRE(server.ok());
  auto result = testing::RunCommand(
      {.argv = {kPython, std::string(KUBESCHED_SOURCE_DIR) + "/tests/e2e/python_client_check.py",
                (*server)->url(), TestApiProcess::kToken, (*server)->ca_file()}},
      absl::Seconds(60));
  REQUIRE(result.ok());
  INFO("stdout:\n" << result->stdout_text << "\nstderr:\n" << result->stderr_text);
  CHECK(result->exit_code == 0);
  CHECK(result->stdout_text.find("\nOK\n") != std::string::npos);
}

}  // namespace
}  // namespace kubesched::testapi
