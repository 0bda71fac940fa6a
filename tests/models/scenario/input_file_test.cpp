// Every input file is a bounded regular file, parsed under a depth cap, and no error message
// quotes what a file that is not the expected JSON contains.
#include "models/scenario/input_file.hpp"

#include <gtest/gtest.h>

#include "tests/models/error_of.hpp"
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "models/scenario/json_reader.hpp"
#include "models/scenario/scenario_loader.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test::error_of;

struct TempDir {
  fs::path dir;
  TempDir() {
    char tmpl[] = "/tmp/trainsim-input-XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path p = dir / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
};

const char* kScenarioHead = R"({"schema_version": 1, "model": "gpt-1.7b",
  "cluster": {"base": "dgx-a100-superpod", "nodes": 4}, "plan": {"dp": 32, "global_batch": 512, )";

TEST(InputFile, RefusesFifosDevicesAndFoldersWithoutBlocking) {
  TempDir t;
  const std::string fifo = (t.dir / "pipe").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_NE(error_of([&] { read_input_file(fifo, "scenario"); }).find("is a FIFO"), std::string::npos);
  // A FIFO with no writer would block a plain open() forever.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(error_of([] { read_input_file("/dev/zero", "calibration"); })
                .find("/dev/zero: the calibration path is a character device, expected a regular file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_input_file(t.dir.string(), "scenario"); }).find("is a folder"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_input_file((t.dir / "none.json").string(), "trace"); })
                .find("cannot open the trace file: not found"),
            std::string::npos);
}

TEST(InputFile, CapsTheBytesAsTheyArriveNotTheReportedSize) {
  // /proc files report st_size 0 whatever they hold.
  struct stat st {};
  ASSERT_EQ(::stat("/proc/self/status", &st), 0);
  ASSERT_EQ(st.st_size, 0);
  EXPECT_NE(error_of([] { read_input_file("/proc/self/status", "model.hf_config", 64); })
                .find("larger than"),
            std::string::npos);
  EXPECT_GT(read_input_file("/proc/self/status", "x").size(), 64u);
  TempDir t;
  const std::string big = t.write("big.json", std::string(4096, ' '));
  EXPECT_NE(error_of([&] { read_input_file(big, "scenario", 1024); }).find("larger than"),
            std::string::npos);
  EXPECT_EQ(read_input_file(big, "scenario").size(), 4096u);
}

TEST(InputFile, DeepValuesStopAtTheDepthCapNamingTheField) {
  const int n = 100000;
  const std::string text = std::string(kScenarioHead) + "\"micro_batch\": " + std::string(n, '[') +
                           std::string(n, ']') + "}}";
  const std::string e = error_of([&] { parse_json_text(text, "s.json"); });
  EXPECT_NE(e.find("s.json: malformed JSON at line 2, column"), std::string::npos) << e;
  EXPECT_NE(e.find("nests deeper than 64 levels in plan.micro_batch[0]"), std::string::npos) << e;
  // Objects too, and a value just under the cap parses.
  std::string deep_objects;
  for (int i = 0; i < n; ++i) deep_objects += "{\"a\":";
  deep_objects += "1" + std::string(n, '}');
  EXPECT_NE(error_of([&] { parse_json_text(deep_objects, "o.json"); }).find("nests deeper"),
            std::string::npos);
  const json ok = parse_json_text(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), "x");
  EXPECT_TRUE(ok.is_array());
  EXPECT_EQ(json_depth_violation("[\"[[[[\"]", 2), std::string::npos);  // brackets in strings
  EXPECT_EQ(json_depth_violation("[[[", 2), 2u);
}

TEST(InputFile, ErrorPrinterDoesNotRecurseIntoADeepValue) {
  // A value built in code (not parsed) nested 100k deep: the messages of the checked fields
  // describe it without walking it.
  // (Copying such a value recurses too, so it is built in place.)
  json holder = {{"network", json::array()}};
  json& root = holder["network"];
  json* cur = &root;
  for (int i = 0; i < 100000; ++i) {
    cur->push_back(json::array());
    cur = &cur->back();
  }
  EXPECT_EQ(error_of([&] { json_to_integer(root, "plan.micro_batch", 1, 10); }),
            "plan.micro_batch: expected an integer between 1 and 10, got a list of 1 item");
  EXPECT_NE(error_of([&] { json_to_quantity(root, units::Kind::kBytes, "cluster.gpu.hbm_capacity"); })
                .find("got a list of 1 item"),
            std::string::npos);
  EXPECT_NE(error_of([&] { JsonReader r(holder, "cluster"); r.string("network"); })
                .find("cluster.network: expected a string, got a list"),
            std::string::npos);
}

TEST(InputFile, OverridePathsNestNoDeeperThanFiles) {
  json raw = json::parse(std::string(kScenarioHead) + "\"micro_batch\": 4}}");
  std::string deep = "plan";
  for (int i = 0; i < 100000; ++i) deep += ".x";
  EXPECT_NE(error_of([&] { apply_override(raw, deep, "1"); }).find("a path of more than 64 components"),
            std::string::npos);
  EXPECT_LT(error_of([&] { apply_override(raw, deep, "1"); }).size(), 200u);
}

TEST(InputFile, NumberBeyondADoubleNamesTheField) {
  const std::string text = std::string(kScenarioHead) + "\"micro_batch\": 1e309}}";
  const std::string e = error_of([&] { parse_json_text(text, "s.json"); });
  EXPECT_NE(e.find("s.json: plan.micro_batch: a number too large for a double"), std::string::npos) << e;
  EXPECT_EQ(e.find("1e309"), std::string::npos) << e;
  json raw = json::parse(std::string(kScenarioHead) + "\"micro_batch\": 4}}");
  EXPECT_NE(error_of([&] { apply_override(raw, "plan.global_batch", "-1e400"); }).find("plan.global_batch"),
            std::string::npos);
}

TEST(InputFile, SyntaxErrorsQuoteNoByteOfTheFile) {
  TempDir t;
  // "/etc/shadow" as hf_config: the first character must not be printed (nlohmann's message
  // says "last read: 'r'").
  const std::string shadow = t.write("shadow", "rootsecret:$6$abcdefgh:19000:0:99999:7:::\n");
  const std::string e1 = error_of([&] { read_json_file(shadow, "model.hf_config"); });
  EXPECT_NE(e1.find("malformed JSON at line 1, column 1"), std::string::npos) << e1;
  EXPECT_NE(e1.find("model.hf_config"), std::string::npos) << e1;
  EXPECT_EQ(e1.find("last read"), std::string::npos) << e1;
  EXPECT_EQ(e1.find("'r"), std::string::npos) << e1;
  EXPECT_EQ(e1.find("root"), std::string::npos) << e1;
  // A file that starts with a JSON string (then garbage): nothing of the string is echoed.
  const std::string str = t.write("token", "\"SECRET-TOKEN-0123456789\" trailing");
  const std::string e2 = error_of([&] { read_json_file(str, "calibration"); });
  EXPECT_EQ(e2.find("SECRET"), std::string::npos) << e2;
  // An unterminated string with a control character: nlohmann quotes the token read so far.
  const std::string ctl = t.write("ctl", "{\"a\": \"SECRET\tTOKEN");
  const std::string e3 = error_of([&] { read_json_file(ctl, "sweep"); });
  EXPECT_NE(e3.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(e3.find("SECRET"), std::string::npos) << e3;
}

TEST(InputFile, TypeErrorsDescribeValuesWithoutQuotingStrings) {
  EXPECT_EQ(describe_json_value(json("SECRET")), "a string (6 characters)");
  EXPECT_EQ(describe_json_value(json(3)), "the number 3");
  EXPECT_EQ(describe_json_value(json::object({{"SECRET", 1}})), "an object with 1 key");
  EXPECT_EQ(error_of([] { json_to_integer(json("SECRET-VALUE"), "model.layers", 1, 10); }),
            "model.layers: expected an integer between 1 and 10, got a string (12 characters)");
  EXPECT_EQ(safe_excerpt(std::string("ab\ncd\x01") + std::string(100, 'x'), 8), "ab?cd?xx...");
  // UTF-8 letters are shown as they are and counted as characters; bidi overrides, C1 controls,
  // stray continuation bytes, overlong forms and surrogates are not.
  EXPECT_EQ(safe_excerpt("модель"), "модель");
  EXPECT_EQ(safe_excerpt("模型-7b", 3), "模型-...");
  EXPECT_EQ(safe_excerpt("a\u202eb\u2066c"), "a?b?c");
  EXPECT_EQ(safe_excerpt("x\xc2\x85y"), "x?y");                 // U+0085, a C1 control
  EXPECT_EQ(safe_excerpt("x\x80y\xc0\xafz"), "x?y??z");       // a lone continuation; overlong '/'
  EXPECT_EQ(safe_excerpt("x\xed\xa0\x80y"), "x???y");          // a UTF-16 surrogate
  EXPECT_EQ(safe_excerpt("\xe6\x97"), "??");                   // a sequence cut short
}

}  // namespace
TEST(InputFile, ADuplicateKeyIsRefusedNotSilentlyDropped) {
  // nlohmann keeps the last value of a repeated key; a scenario's first "tp" would vanish.
  const std::string text = std::string(kScenarioHead) + "\"micro_batch\": 4, \"micro_batch\": 8}}";
  const std::string e = error_of([&] { parse_json_text(text, "s.json"); });
  EXPECT_NE(e.find("s.json: plan.micro_batch: the key appears twice"), std::string::npos) << e;
  // The same key in two objects is no duplicate; profiler output keeps the last as its readers do.
  EXPECT_NO_THROW(parse_json_text(R"({"a": {"k": 1}, "b": {"k": 2}})", "x"));
  EXPECT_EQ(parse_json_text(R"({"k": 1, "k": 2})", "x", DuplicateKeys::kKeepLast)["k"], 2);
}

}  // namespace trainsim
