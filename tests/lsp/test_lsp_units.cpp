// Unit tests of the server's pure parts (UTF-16 positions, incremental line indexes, framing), and
// of a server built by hand on its own loop and pipes.
#define CATCH_CONFIG_MAIN
#include <unistd.h>

#include <catch2/catch.hpp>
#include <random>
#include <thread>
#include <set>

#include "answers.h"
#include "document_text.h"
#include "server.h"
#include "transport.h"

using namespace ss::lsp;

TEST_CASE("UTF-16 columns count surrogate pairs as two units") {
  std::string line = "a😀b×c";  // 😀 is 4 bytes, 2 units; × is 2 bytes, 1 unit
  CHECK(utf16_length(line) == 6);
  CHECK(utf16_to_byte(line, 0) == 0);
  CHECK(utf16_to_byte(line, 1) == 1);
  CHECK(utf16_to_byte(line, 2) == 1);  // inside the pair: before the emoji
  CHECK(utf16_to_byte(line, 3) == 5);
  CHECK(utf16_to_byte(line, 4) == 6);
  CHECK(utf16_to_byte(line, 5) == 8);
  CHECK(utf16_to_byte(line, 99) == line.size());
  CHECK(byte_to_utf16(line, 5) == 3);
  CHECK(byte_to_utf16(line, 3) == 1);  // inside the emoji's bytes: its start
  CHECK(byte_to_utf16(line, 8) == 5);
  std::string invalid = "a\xff\xfe" "b";
  CHECK(utf16_length(invalid) == 4);  // each invalid byte counts once
}

TEST_CASE("positions clamp to the line and the file") {
  TextDocument doc("ab\r\ncd\nlast");
  CHECK(doc.offset_of({0, 99}) == 2);  // before the \r
  CHECK(doc.offset_of({1, 1}) == 5);
  CHECK(doc.offset_of({2, 99}) == doc.text().size());
  CHECK(doc.offset_of({99, 0}) == doc.text().size());
  CHECK(doc.position_of(5) == Position{1, 1});
  CHECK(doc.position_of(999) == Position{2, 4});
}

TEST_CASE("edits keep the line index equal to a fresh one and report tree-sitter edits") {
  TextDocument doc("dim D = 4\n# 😀\nfn f():\n    return 1\n");
  TSInputEdit edit = doc.replace({{1, 4}, {2, 2}}, "X\nY");
  CHECK(doc.text() == "dim D = 4\n# 😀X\nY f():\n    return 1\n");
  CHECK(edit.start_byte == 16);
  CHECK(edit.old_end_byte == 19);
  CHECK(edit.new_end_byte == 19);
  CHECK(edit.start_point.row == 1);
  CHECK(edit.start_point.column == 6);
  CHECK(edit.old_end_point.row == 2);
  CHECK(edit.old_end_point.column == 2);
  CHECK(edit.new_end_point.row == 2);
  CHECK(edit.new_end_point.column == 1);

  std::mt19937 random(7);
  const char* pieces[] = {"", "a", "\n", "😀", "é\n\n", "xy\r\nz"};
  for (int i = 0; i < 2000; ++i) {
    uint32_t lines = doc.lines().line_count();
    Position a{static_cast<uint32_t>(random() % (lines + 1)), static_cast<uint32_t>(random() % 12)};
    Position b{static_cast<uint32_t>(random() % (lines + 1)), static_cast<uint32_t>(random() % 12)};
    doc.replace({a, b}, pieces[random() % 6]);
    LineIndex fresh;
    fresh.reset(doc.text());
    REQUIRE(fresh.line_count() == doc.lines().line_count());
    for (uint32_t l = 0; l < fresh.line_count(); ++l) REQUIRE(fresh.line_start(l) == doc.lines().line_start(l));
  }
}

namespace {
struct Frames {
  std::vector<std::string> messages, bad, warnings;
  FrameReader reader{{[this](std::string_view m) { messages.emplace_back(m); },
                      [this](std::string_view p) { bad.emplace_back(p); },
                      [this](std::string_view p) { warnings.emplace_back(p); }}};
};
std::string frame(std::string_view body) { return "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + std::string(body); }
}  // namespace

TEST_CASE("an edit waits only when checks are slow and edits come faster than they finish") {
  CHECK(edit_debounce_ms(5, 1, 30) == 0);      // fast checks: never
  CHECK(edit_debounce_ms(5, std::nullopt, 30) == 0);
  CHECK(edit_debounce_ms(45, std::nullopt, 30) == 0);  // the first edit: nothing to coalesce with
  CHECK(edit_debounce_ms(45, 500, 30) == 0);   // slow checks, but someone edits and looks
  CHECK(edit_debounce_ms(45, 60, 30) == 0);
  CHECK(edit_debounce_ms(45, 20, 30) == 30);   // typing faster than checks finish: wait the cap
  CHECK(edit_debounce_ms(30, 10, 30) == 30);
  CHECK(edit_debounce_ms(45, 20, 0) == 0);     // --debounce-ms 0
}

TEST_CASE("frames split anywhere are put back together") {
  Frames f;
  std::string stream = frame("{\"a\":1}") + "content-length: 7\r\nContent-Type: x\r\n\r\n{\"b\":2}" + frame("{}");
  for (char c : stream) f.reader.feed(std::string_view(&c, 1));
  CHECK(f.messages == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}", "{}"});
  CHECK(f.bad.empty());
}

TEST_CASE("a wrong Content-Length costs only its own frame") {
  Frames f;
  // Too long: cut at the next header, even before more bytes arrive.
  f.reader.feed("Content-Length: 500\r\n\r\n{\"a\":1}" + frame("{\"b\":2}"));
  CHECK(f.messages == std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"});
  // Too short: the rest is junk before the next header.
  f.messages.clear();
  f.reader.feed("Content-Length: 3\r\n\r\n{\"c\":3}" + frame("{\"d\":4}"));
  CHECK(f.messages == std::vector<std::string>{"{\"c", "{\"d\":4}"});
  // Not a number, or none at all.
  f.messages.clear();
  f.reader.feed("Content-Length: many\r\n\r\n" + frame("{}") + "X-Other: 1\r\n\r\n" + frame("[]"));
  CHECK(f.bad.size() == 2);
  CHECK(f.messages == std::vector<std::string>{"{}", "[]"});
}

TEST_CASE("a server on a loop of its own, reading and writing pipes, answers a hover") {
  // Nothing but the constructor's arguments: the loop's `data` is not the server, as an embedder may have it.
  int input[2], output[2];
  REQUIRE(pipe(input) == 0);
  REQUIRE(pipe(output) == 0);
  const std::string uri = "file:///hand.ss";
  std::string session =
      frame(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}})") +
      frame(R"({"jsonrpc":"2.0","method":"initialized","params":{}})") +
      frame(R"({"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":")" + uri +
            R"(","languageId":"shapescript","version":1,"text":"dim D = 4\n\nfn double(x: [b D]) -> [b D]:\n    return x * 2\n"}}})") +
      frame(R"({"jsonrpc":"2.0","id":2,"method":"textDocument/hover","params":{"textDocument":{"uri":")" + uri +
            R"("},"position":{"line":3,"character":11}}})") +
      frame(R"({"jsonrpc":"2.0","id":3,"method":"shutdown"})") + frame(R"({"jsonrpc":"2.0","method":"exit"})");
  REQUIRE(write(input[1], session.data(), session.size()) == static_cast<ssize_t>(session.size()));
  close(input[1]);
  std::string written;
  std::thread drain([&] {
    char buffer[4096];
    for (ssize_t n; (n = read(output[0], buffer, sizeof buffer)) > 0;) written.append(buffer, static_cast<size_t>(n));
  });

  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  loop.data = nullptr;  // uv_loop_init leaves it as it was: here, nothing
  int status;
  {
    ss::lsp::ServerOptions options;
    options.debounce_ms = 0;
    options.input_fd = input[0];
    options.output_fd = output[1];
    ss::lsp::Server server(&loop, options);
    status = server.run();
  }
  uv_loop_close(&loop);
  drain.join();  // the server closed its end of the pipe
  close(output[0]);

  CHECK(status == 0);
  Frames replies;
  replies.reader.feed(written);
  std::map<int, nlohmann::json> by_id;
  for (const std::string& body : replies.messages) {
    auto message = nlohmann::json::parse(body);
    if (message.contains("id") && message["id"].is_number()) by_id[message["id"].get<int>()] = message;
  }
  REQUIRE(by_id.count(2));
  INFO(by_id[2].dump());
  CHECK(by_id[2]["result"]["contents"]["value"].get<std::string>().find("x: [b D]") != std::string::npos);
  CHECK(by_id.count(3));
}

namespace {
std::set<std::string> completion_labels(const std::string& text, const std::string& before) {
  TextDocument document(text);
  auto analysis = ss::analyze(ss::SourceFile("c.ss", text));
  Converter at("file:///c.ss", document);
  size_t offset = text.find(before);
  REQUIRE(offset != std::string::npos);
  json answer = completion(*analysis, at, static_cast<uint32_t>(offset + before.size()));
  std::set<std::string> labels;
  for (const json& item : answer["items"]) labels.insert(item["label"].get<std::string>());
  return labels;
}
}  // namespace

TEST_CASE("completion inside a lambda offers its parameter, and only there") {
  std::string text =
      "dim D = 4\n\n"
      "fn f(x: [D]) -> [D]:\n"
      "    y = x * 2.0\n"
      "    z = x + (D |> map(step => step / D))\n"
      "    return z\n";
  auto inside = completion_labels(text, "step => step");
  CHECK(inside.count("step"));
  CHECK(inside.count("y"));
  CHECK(inside.count("x"));
  auto after = completion_labels(text, "return z");
  CHECK(!after.count("step"));
  CHECK(after.count("z"));
}

TEST_CASE("Markdown becomes plain text for a client that asks for it") {
  CHECK(markdown_to_plain("```shapescript\nfn f(x: [D]) -> [D]\n```\n\nDoubles `x`.") == "fn f(x: [D]) -> [D]\n\nDoubles x.");
  CHECK(markdown_to_plain("**12 parameters** = D·V") == "12 parameters = D·V");
  CHECK(markdown_to_plain("x ** 2 grows") == "x ** 2 grows");  // a lone ** is a power, not bold
  CHECK(markdown_to_plain("") == "");

  json plain_first = {{"textDocument", {{"hover", {{"contentFormat", {"plaintext", "markdown"}}}}}}};
  CHECK(ClientMarkup::from_capabilities(plain_first).hover == Markup::plaintext);
  CHECK(ClientMarkup::from_capabilities(plain_first).completion == Markup::markdown);
  json markdown_first = {{"textDocument", {{"hover", {{"contentFormat", {"markdown", "plaintext"}}}}}}};
  CHECK(ClientMarkup::from_capabilities(markdown_first).hover == Markup::markdown);
  CHECK(ClientMarkup::from_capabilities(json::object()).signature_help == Markup::markdown);
  CHECK(ClientMarkup::from_capabilities(json("not an object")).hover == Markup::markdown);
}
