// The flag parser follows Go's pflag: a bare boolean flag is true and never takes the next
// argument; "=false" turns it off; unknown flags are errors that name them.

#include "scheduler/cmd/flags.h"

#include <catch2/catch.hpp>
#include <sstream>

namespace kubesched::scheduler {
namespace {

struct Parsed {
  std::optional<ParsedFlags> flags;
  std::string err;
};

Parsed Parse(std::vector<std::string> args) {
  std::ostringstream err;
  auto flags = ParseFlags(args, 0, {"config", "identity", "v"}, err,
                          {.values = {}, .booleans = {"leader-elect", "profiling"}});
  return {std::move(flags), err.str()};
}

TEST_CASE("a bare boolean flag is true and leaves the next flag alone", "[cli][flags]") {
  const Parsed r = Parse({"--leader-elect", "--config", "c.yaml"});
  REQUIRE(r.flags.has_value());
  CHECK(Get(*r.flags, "leader-elect") == "true");
  CHECK(Get(*r.flags, "config") == "c.yaml");
}

TEST_CASE("a bare boolean flag last on the line is true", "[cli][flags]") {
  const Parsed r = Parse({"--config", "c.yaml", "--leader-elect"});
  REQUIRE(r.flags.has_value());
  CHECK(Get(*r.flags, "leader-elect") == "true");
}

TEST_CASE("a boolean flag takes its value after '='", "[cli][flags]") {
  for (const std::string value : {"false", "true", "0", "1", "F", "TRUE"}) {
    const Parsed r = Parse({"--leader-elect=" + value});
    REQUIRE(r.flags.has_value());
    CHECK(Get(*r.flags, "leader-elect") == value);
  }
}

TEST_CASE("a positional argument after a bare boolean flag is an error that shows the '=' form",
          "[cli][flags]") {
  const Parsed r = Parse({"--leader-elect", "false"});
  CHECK_FALSE(r.flags.has_value());
  CHECK_THAT(r.err, Catch::Contains("unexpected argument \"false\""));
  CHECK_THAT(r.err, Catch::Contains("(--leader-elect=false)"));
  const Parsed other = Parse({"--leader-elect", "extra"});
  CHECK_FALSE(other.flags.has_value());
  CHECK(other.err == "error: unexpected argument \"extra\"\n");
}

TEST_CASE("a value flag takes the next argument or its '=' value", "[cli][flags]") {
  const Parsed r = Parse({"--config", "--identity=me"});
  REQUIRE(r.flags.has_value());
  CHECK(Get(*r.flags, "config") == "--identity=me");
  const Parsed eq = Parse({"--config=a=b"});
  REQUIRE(eq.flags.has_value());
  CHECK(Get(*eq.flags, "config") == "a=b");
}

TEST_CASE("every spelling of the verbosity flag reads the level", "[cli][flags]") {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-v", "3"}, {"-v=3"}, {"-v3"}, {"--v=3"}, {"--v", "3"}}) {
    const Parsed r = Parse(args);
    REQUIRE(r.flags.has_value());
    CHECK(Get(*r.flags, "v") == "3");
  }
}

TEST_CASE("unknown flags and missing values are errors naming the flag", "[cli][flags]") {
  CHECK(Parse({"--bogus", "1"}).err == "error: unknown flag --bogus\n");
  CHECK(Parse({"--bogus"}).err == "error: unknown flag --bogus\n");
  CHECK(Parse({"-x"}).err == "error: unknown flag -x\n");
  CHECK(Parse({"-vx"}).err == "error: unknown flag -vx\n");
  CHECK(Parse({"--config"}).err == "error: flag --config needs a value\n");
}

TEST_CASE("Go's boolean spellings parse, others do not", "[cli][flags]") {
  for (std::string_view yes : {"1", "t", "T", "TRUE", "true", "True"}) {
    CHECK(ParseGoBool(yes) == true);
  }
  for (std::string_view no : {"0", "f", "F", "FALSE", "false", "False"}) {
    CHECK(ParseGoBool(no) == false);
  }
  for (std::string_view bad : {"", "yes", "tRuE", "2", " true"}) CHECK_FALSE(ParseGoBool(bad));
}

}  // namespace
}  // namespace kubesched::scheduler
