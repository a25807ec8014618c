#include "tokenizer_file.h"
#include "server.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <cstring>
#include <map>

#include "language_server.h"

#ifndef SHAPESCRIPT_VERSION
#define SHAPESCRIPT_VERSION "0.0.0"
#endif

namespace ss::lsp {

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

const json& member(const json& object, const char* key) {
  static const json null;
  if (!object.is_object()) return null;
  auto it = object.find(key);
  return it == object.end() ? null : *it;
}

std::string dump(const json& message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

// What a request answered from a document's analysis reads.
struct AnswerContext {
  const Analysis& analysis;
  const Converter& at;
  const json& params;
  const ClientMarkup& markup;
  const DiagnosticStyle& style;
  uint32_t position() const { return at.offset(params.at("position")); }
  std::pair<uint32_t, uint32_t> range() const {
    const json& r = params.at("range");
    return {at.offset(r.at("start")), at.offset(r.at("end"))};
  }
};

// Every request answered from a document's analysis, once: they wait for the current version's.
// Each answer is in its own file (lsp/hover.cpp, ...).
using Answer = json (*)(const AnswerContext&);
const std::map<std::string, Answer, std::less<>>& analysis_requests() {
  static const std::map<std::string, Answer, std::less<>> table = {
      {"textDocument/hover", [](const AnswerContext& c) { return hover(c.analysis, c.at, c.position(), c.markup.hover); }},
      {"textDocument/definition", [](const AnswerContext& c) { return definition(c.analysis, c.at, c.position()); }},
      {"textDocument/references",
       [](const AnswerContext& c) {
         const json& include = member(member(c.params, "context"), "includeDeclaration");
         return references(c.analysis, c.at, c.position(), !include.is_boolean() || include.get<bool>());
       }},
      {"textDocument/prepareRename", [](const AnswerContext& c) { return prepare_rename(c.analysis, c.at, c.position()); }},
      {"textDocument/rename",
       [](const AnswerContext& c) { return rename(c.analysis, c.at, c.position(), c.params.at("newName").get<std::string>()); }},
      {"textDocument/documentSymbol", [](const AnswerContext& c) { return document_symbols(c.analysis, c.at); }},
      {"textDocument/completion", [](const AnswerContext& c) { return completion(c.analysis, c.at, c.position(), c.markup.completion); }},
      {"textDocument/signatureHelp",
       [](const AnswerContext& c) { return signature_help(c.analysis, c.at, c.position(), c.markup.signature_help); }},
      {"textDocument/codeAction",
       [](const AnswerContext& c) {
         auto [begin, end] = c.range();
         return code_actions(c.analysis, c.at, begin, end, member(member(c.params, "context"), "only"), c.style);
       }},
      {"textDocument/inlayHint",
       [](const AnswerContext& c) {
         auto [begin, end] = c.range();
         return inlay_hints(c.analysis, c.at, begin, end);
       }},
      {"textDocument/semanticTokens/full", [](const AnswerContext& c) { return semantic_tokens(c.analysis, c.at); }},
  };
  return table;
}

uint32_t clamped_number(const json& value) {
  if (value.is_number_unsigned()) return static_cast<uint32_t>(std::min<uint64_t>(value.get<uint64_t>(), UINT32_MAX));
  if (value.is_number_integer()) return static_cast<uint32_t>(std::clamp<int64_t>(value.get<int64_t>(), 0, UINT32_MAX));
  if (value.is_number_float()) return static_cast<uint32_t>(std::clamp(value.get<double>(), 0.0, double(UINT32_MAX)));
  throw json::type_error::create(302, "expected a number", nullptr);
}

Range to_range(const json& range) {
  const json& start = range.at("start");
  const json& end = range.at("end");
  return {{clamped_number(start.at("line")), clamped_number(start.at("character"))},
          {clamped_number(end.at("line")), clamped_number(end.at("character"))}};
}

// The file path a URI names, for the core's SourceFile (used in its messages only).
std::string uri_path(const std::string& uri) {
  std::string_view rest = uri;
  if (rest.starts_with("file://")) rest.remove_prefix(7);
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '%' && i + 2 < rest.size() && std::isxdigit(static_cast<unsigned char>(rest[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(rest.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += rest[i];
    }
  }
  return out;
}

}  // namespace

struct Server::Check {
  uv_work_t work{};
  Server* server = nullptr;
  std::shared_ptr<Document> document;
  std::string path, text;
  SyntaxTree old_tree;  // a copy of the document's edited tree
  std::shared_ptr<Analysis> previous;  // the last analysis, whose functions an incremental check takes
  int64_t version = 0;
  uint64_t generation = 0;
  AnalyzeOptions options;
  // Results, filled on the thread pool.
  bool skipped = false;
  SyntaxTree new_tree;
  std::unique_ptr<Analysis> result;
  std::string error;
  double parse_ms = 0, analyze_ms = 0;
  CheckReuse reuse;
};

Server::Server(uv_loop_t* loop, ServerOptions options)
    : loop_(loop),
      options_(options),
      transport_(
          loop,
          FrameReader::Handler{[this](std::string_view body) { receive(body); },
                               [this](std::string_view problem) { bad_frame(problem); },
                               [](std::string_view problem) { spdlog::warn("{}", problem); }},
          [this] {
            spdlog::info("end of input");
            if (shutdown_reply_) exit_after_shutdown_ = true;  // answer what is pending first
            else begin_exit(shutdown_ ? 0 : 1);
          },
          options.input_fd, options.output_fd) {
  style_.error_docs = options.error_docs;
}

Server::~Server() = default;

int Server::run() {
  if (!transport_.start()) return 1;
  spdlog::info("shapescript-lsp {} ready", SHAPESCRIPT_VERSION);
  uv_run(loop_, UV_RUN_DEFAULT);
  spdlog::info("exiting with status {}", exit_status_);
  return exit_status_;
}

// ---------------------------------------------------------------------------------------------
// JSON-RPC

void Server::bad_frame(std::string_view problem) {
  spdlog::warn("bad frame: {}", problem);
  reply_error(nullptr, error_code::parse_error, std::string(problem));
}

void Server::receive(std::string_view body) {
  if (exiting_) return;
  // No LSP message nests more than a few levels, and a value nested tens of thousands deep would
  // overflow the stack when copied or printed (both recursive): deeper values are not built.
  bool too_deep = false;
  json message = json::parse(
      body,
      [&](int depth, json::parse_event_t event, json&) {
        if (depth >= kMaxJsonDepth && (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start)) too_deep = true;
        return !too_deep;
      },
      false);
  if (too_deep) {
    spdlog::warn("a message of {} bytes nests deeper than {}", body.size(), kMaxJsonDepth);
    reply_error(nullptr, error_code::parse_error, "the message nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    return;
  }
  if (message.is_discarded()) {
    spdlog::warn("a message of {} bytes is not JSON", body.size());
    reply_error(nullptr, error_code::parse_error, "the message is not valid JSON");
    return;
  }
  dispatch(message);
}

void Server::dispatch(json& message) {
  if (!message.is_object()) {
    reply_error(nullptr, error_code::invalid_request, "a message must be a JSON object");
    return;
  }
  auto id_it = message.find("id");
  bool has_id = id_it != message.end();
  json id = has_id ? *id_it : json(nullptr);
  if (has_id && !(id.is_number_integer() || id.is_string() || id.is_null())) {
    reply_error(nullptr, error_code::invalid_request, "a request's id must be a number or a string");
    return;
  }
  auto method_it = message.find("method");
  if (method_it == message.end()) {
    if (has_id && (message.contains("result") || message.contains("error"))) return;  // a reply to us; we ask nothing
    reply_error(id, error_code::invalid_request, "a message needs a method");
    return;
  }
  if (!method_it->is_string()) {
    if (has_id) reply_error(id, error_code::invalid_request, "a method must be a string");
    return;
  }
  if (member(message, "jsonrpc") != "2.0") {
    if (has_id) reply_error(id, error_code::invalid_request, "jsonrpc must be \"2.0\"");
    return;
  }
  std::string method = *method_it;
  json params = message.contains("params") ? message["params"] : json(nullptr);
  if (!params.is_null() && !params.is_object() && !params.is_array()) {
    if (has_id) reply_error(id, error_code::invalid_params, "params must be an object or an array");
    return;
  }
  if (has_id) request(id, method, params);
  else notification(method, params);
}

void Server::request(const json& id, const std::string& method, json& params) {
  auto start = Clock::now();
  try {
    if (method == "initialize") {
      if (initialized_) return reply_error(id, error_code::invalid_request, "the server is already initialized");
      json result = initialize(params);
      initialized_ = true;
      return reply(id, std::move(result));
    }
    if (!initialized_) return reply_error(id, error_code::server_not_initialized, "the server has not been initialized");
    if (shutdown_) return reply_error(id, error_code::invalid_request, "the server is shutting down");
    if (method == "shutdown") {
      shutdown_ = true;
      shutdown_reply_ = id;
      return finish_shutdown_when_idle();
    }
    if (analysis_requests().count(method)) {
      if (!params.is_object() || !member(params, "textDocument").is_object())
        return reply_error(id, error_code::invalid_params, method + " needs params.textDocument");
      auto document = find(params);
      if (!document) {
        spdlog::warn("{} on a document that is not open", method);
        return reply(id, nullptr);
      }
      Waiting waiting{id, method, std::move(params)};
      if (current(*document)) return answer(*document, waiting);
      document->waiting.push_back(std::move(waiting));
      if (document->checking) document->check_again = true;
      else schedule(document, 0);  // someone is waiting: skip the debounce
      return;
    }
    reply_error(id, error_code::method_not_found, "unknown method `" + method + "`");
  } catch (const json::exception& e) {
    reply_error(id, error_code::invalid_params, e.what());
  } catch (const std::exception& e) {
    spdlog::error("{} failed: {}", method, e.what());
    reply_error(id, error_code::internal_error, e.what());
  }
  spdlog::debug("{} answered in {:.2f} ms", method, milliseconds_since(start));
}

void Server::notification(const std::string& method, json& params) {
  try {
    if (method == "exit") {
      if (shutdown_reply_) {
        exit_after_shutdown_ = true;
        return;
      }
      return begin_exit(shutdown_ ? 0 : 1);
    }
    if (!initialized_) {
      spdlog::warn("dropped `{}` before initialize", method);
      return;
    }
    if (method == "initialized") return;
    if (method == "$/cancelRequest") return cancel(params);
    if (method == "textDocument/didOpen") return did_open(params);
    if (method == "textDocument/didChange") return did_change(params);
    if (method == "textDocument/didClose") return did_close(params);
    if (method == "textDocument/didSave") return did_save(params);
    if (method == "workspace/didChangeConfiguration") return configure(member(params, "settings"));
    spdlog::debug("ignored notification `{}`", method);
  } catch (const std::exception& e) {
    spdlog::warn("{}: bad params: {}", method, e.what());
  }
}

void Server::reply(const json& id, json result) {
  transport_.send(dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}}));
}

void Server::reply_error(const json& id, int code, const std::string& message) {
  transport_.send(dump(json{{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}}));
}

void Server::notify(const std::string& method, json params) {
  transport_.send(dump(json{{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}}));
}

// ---------------------------------------------------------------------------------------------
// Lifecycle and settings

json Server::initialize(const json& params) {
  configure(member(params, "initializationOptions"));
  markup_ = ClientMarkup::from_capabilities(member(params, "capabilities"));
  json capabilities = {
      {"positionEncoding", "utf-16"},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      {"hoverProvider", true},
      {"definitionProvider", true},
      {"documentSymbolProvider", true},
      {"completionProvider", {{"triggerCharacters", {"."}}, {"resolveProvider", false}}},
      {"signatureHelpProvider", {{"triggerCharacters", {"(", ","}}, {"retriggerCharacters", {","}}}},
      {"codeActionProvider", {{"codeActionKinds", {"quickfix"}}}},
      {"inlayHintProvider", true},
      {"referencesProvider", true},
      {"renameProvider", {{"prepareProvider", true}}},
      {"semanticTokensProvider",
       {{"legend", {{"tokenTypes", semantic_token_types()}, {"tokenModifiers", semantic_token_modifiers()}}}, {"full", true}}},
  };
  return {{"capabilities", capabilities}, {"serverInfo", {{"name", "shapescript-lsp"}, {"version", SHAPESCRIPT_VERSION}}}};
}

// Accepts {"shapescript": {"servingSeverity": ...}}, {"shapescript.servingSeverity": ...} or
// {"servingSeverity": ...}.
void Server::configure(const json& settings) {
  if (!settings.is_object()) return;
  const json* value = nullptr;
  if (const json& nested = member(member(settings, "shapescript"), "servingSeverity"); !nested.is_null()) value = &nested;
  else if (const json& dotted = member(settings, "shapescript.servingSeverity"); !dotted.is_null()) value = &dotted;
  else if (const json& plain = member(settings, "servingSeverity"); !plain.is_null()) value = &plain;
  if (!value) return;
  auto parsed = value->is_string() ? ServingSeverity::parse(value->get<std::string>()) : std::nullopt;
  if (!parsed) {
    spdlog::warn("shapescript.servingSeverity must be error, warning, information, hint or off, not {}", dump(*value));
    return;
  }
  if (parsed->core == style_.serving.core && parsed->hint == style_.serving.hint) return;
  style_.serving = *parsed;
  ++generation_;
  spdlog::info("serving rules now reported as {}", value->get<std::string>());
  for (auto& [uri, document] : documents_) {
    if (document->checking) document->check_again = true;
    else schedule(document, 0);
  }
}

void Server::finish_shutdown_when_idle() {
  if (!shutdown_reply_) return;
  for (auto& [uri, document] : documents_)
    if (!document->waiting.empty()) return;
  reply(*shutdown_reply_, nullptr);
  shutdown_reply_.reset();
  if (exit_after_shutdown_) begin_exit(0);
}

void Server::begin_exit(int status) {
  if (exiting_) return;
  exiting_ = true;
  exit_status_ = status;
  transport_.close();
  for (auto& [uri, document] : documents_) {
    document->closed = true;
    uv_close(reinterpret_cast<uv_handle_t*>(document->timer), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
    document->timer = nullptr;
  }
  documents_.clear();
  for (Check* check : checks_) uv_cancel(reinterpret_cast<uv_req_t*>(&check->work));  // only those not started
}

// ---------------------------------------------------------------------------------------------
// Documents

std::shared_ptr<Server::Document> Server::find(const json& params) const {
  const json& uri = member(member(params, "textDocument"), "uri");
  if (!uri.is_string()) throw json::type_error::create(302, "textDocument.uri must be a string", nullptr);
  auto it = documents_.find(uri.get<std::string>());
  return it == documents_.end() ? nullptr : it->second;
}

bool Server::current(const Document& document) const {
  return document.analysis && document.analysis_version == document.version && document.analysis_generation == generation_;
}

void Server::did_open(const json& params) {
  const json& item = params.at("textDocument");
  std::string uri = item.at("uri").get<std::string>();
  std::string text = item.at("text").get<std::string>();
  int64_t version = member(item, "version").is_number_integer() ? item["version"].get<int64_t>() : 0;
  if (auto it = documents_.find(uri); it != documents_.end()) {
    spdlog::warn("{} opened twice; replacing it", uri);
    json close = {{"textDocument", {{"uri", uri}}}};
    did_close(close);
  }
  auto document = std::make_shared<Document>();
  document->server = this;
  document->uri = uri;
  document->version = version;
  document->latest_version = version;
  document->text.set_text(std::move(text));
  document->timer = new uv_timer_t;
  uv_timer_init(loop_, document->timer);
  document->timer->data = document.get();
  documents_[uri] = document;
  spdlog::info("opened {} (version {}, {} bytes)", uri, version, document->text.text().size());
  schedule(document, 0);
}

void Server::did_change(const json& params) {
  auto document = find(params);
  if (!document) {
    spdlog::warn("didChange of a document that is not open");
    return;
  }
  const json& changes = params.at("contentChanges");
  if (!changes.is_array()) throw json::type_error::create(302, "contentChanges must be an array", nullptr);
  // Check every change before applying any, so a malformed one leaves the document as it was.
  std::vector<std::pair<std::optional<Range>, const std::string*>> edits;
  for (const json& change : changes) {
    const json& text = change.at("text");
    if (!text.is_string()) throw json::type_error::create(302, "a content change's text must be a string", nullptr);
    std::optional<Range> range;
    if (change.contains("range") && !change["range"].is_null()) range = to_range(change["range"]);
    edits.emplace_back(range, text.get_ptr<const std::string*>());
  }
  for (auto& [range, text] : edits) {
    if (!range) {
      document->text.set_text(*text);
      document->tree = SyntaxTree();  // nothing to reuse
      continue;
    }
    TSInputEdit edit = document->text.replace(*range, *text);
    if (document->tree.get()) ts_tree_edit(document->tree.get(), &edit);
  }
  const json& version = member(params.at("textDocument"), "version");
  document->version = version.is_number_integer() ? version.get<int64_t>() : document->version + 1;
  document->latest_version = document->version;
  // An edit is checked at once, and edits made during a check coalesce into the one after it
  // (check_again). Only when checks take longer than the cap and this edit came sooner after the
  // last than a check takes (someone typing) does it wait the cap, so that each keystroke doesn't
  // start a check the next one makes stale; someone who edits and looks isn't kept waiting.
  auto now = Clock::now();
  std::optional<double> since_last_edit;
  if (document->last_edit) since_last_edit = std::chrono::duration<double, std::milli>(now - *document->last_edit).count();
  document->last_edit = now;
  uint64_t debounce = edit_debounce_ms(document->check_ms, since_last_edit, options_.debounce_ms);
  schedule(document, document->waiting.empty() ? debounce : 0);
}

uint64_t edit_debounce_ms(double check_ms, std::optional<double> since_last_edit_ms, uint64_t cap_ms) {
  bool slow = check_ms >= static_cast<double>(cap_ms);
  bool typing = since_last_edit_ms && *since_last_edit_ms < check_ms;
  return slow && typing ? cap_ms : 0;
}

void Server::did_close(const json& params) {
  auto document = find(params);
  if (!document) return;
  document->closed = true;
  for (Waiting& waiting : document->waiting) reply(waiting.id, nullptr);
  document->waiting.clear();
  uv_close(reinterpret_cast<uv_handle_t*>(document->timer), [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  document->timer = nullptr;
  documents_.erase(document->uri);
  notify("textDocument/publishDiagnostics", {{"uri", document->uri}, {"diagnostics", json::array()}});
  spdlog::info("closed {}", document->uri);
  finish_shutdown_when_idle();
}

void Server::did_save(const json& params) {
  auto document = find(params);
  const json& text = member(params, "text");
  if (!document || !text.is_string() || text.get<std::string>() == document->text.text()) return;
  document->text.set_text(text.get<std::string>());
  document->tree = SyntaxTree();
  document->latest_version = ++document->version;
  schedule(document, 0);
}

void Server::cancel(const json& params) {
  const json& id = member(params, "id");
  for (auto& [uri, document] : documents_)
    for (auto it = document->waiting.begin(); it != document->waiting.end(); ++it)
      if (it->id == id) {
        reply_error(id, error_code::request_cancelled, "cancelled");
        document->waiting.erase(it);
        return finish_shutdown_when_idle();
      }
}

// ---------------------------------------------------------------------------------------------
// Checking

void Server::schedule(const std::shared_ptr<Document>& document, uint64_t delay_ms) {
  if (!document->timer) return;
  uv_timer_start(
      document->timer,
      [](uv_timer_t* timer) {
        auto* raw = static_cast<Document*>(timer->data);
        Server* server = raw->server;
        auto it = server->documents_.find(raw->uri);
        if (it == server->documents_.end() || it->second.get() != raw) return;
        if (raw->checking) raw->check_again = true;
        else server->start_check(it->second);
      },
      delay_ms, 0);
}

void Server::start_check(const std::shared_ptr<Document>& document) {
  auto* check = new Check;
  check->work.data = check;
  check->server = this;
  check->document = document;
  check->path = uri_path(document->uri);
  check->text = document->text.text();
  if (document->tree.get()) check->old_tree = SyntaxTree(ts_tree_copy(document->tree.get()));
  check->version = document->version;
  check->generation = generation_;
  if (options_.incremental) check->previous = std::move(document->analysis);
  check->options.serving_severity = style_.serving.core;
  read_named_files(check->options);
  document->checking = true;
  document->check_again = false;
  checks_.push_back(check);
  int rc = uv_queue_work(loop_, &check->work, run_check, finish_check);
  if (rc != 0) {
    spdlog::error("can't queue a check: {}", uv_strerror(rc));
    checks_.pop_back();
    document->checking = false;
    delete check;
  }
}

void Server::run_check(uv_work_t* work) {
  auto* check = static_cast<Check*>(work->data);
  if (check->document->latest_version.load() != check->version) {
    check->skipped = true;  // a newer version has arrived: don't bother
    return;
  }
  try {
    auto start = Clock::now();
    check->new_tree = parse_source(check->text, check->old_tree.get() ? &check->old_tree : nullptr);
    check->parse_ms = milliseconds_since(start);
    start = Clock::now();
    SourceFile file(check->path, check->text);
    check->result = check->server->options_.incremental
                        ? analyze_incremental(std::move(file), check->new_tree, check->options, check->previous.get(), &check->reuse)
                        : analyze_tree(std::move(file), check->new_tree, check->options);
    check->analyze_ms = milliseconds_since(start);
  } catch (const std::exception& e) {
    check->error = e.what();
  } catch (...) {
    check->error = "unknown exception";
  }
}

void Server::finish_check(uv_work_t* work, int status) {
  std::unique_ptr<Check> check(static_cast<Check*>(work->data));
  Server* self = check->server;
  // Checking incrementally, the opening check is a full one: it says nothing of what an edit's costs.
  bool opening = self->options_.incremental && !check->previous;
  std::erase(self->checks_, check.get());
  auto document = check->document;
  document->checking = false;
  // A check that didn't run leaves the analysis it took as it was: the document has it back.
  bool ran = !check->skipped && status != UV_ECANCELED;
  if (!ran && !document->analysis) document->analysis = std::move(check->previous);
  self->release_later(std::move(check->previous));
  if (self->exiting_ || document->closed || status == UV_ECANCELED) return;
  bool fresh = !check->skipped && check->version == document->version && check->generation == self->generation_;
  if (!fresh) {
    spdlog::debug("dropped a stale check of {} version {}", document->uri, check->version);
    // Not shown, but what the next check starts from: the one it took from is gone.
    if (check->result && check->error.empty() && !document->analysis) {
      document->analysis = std::move(check->result);
      document->analysis_version = check->version;
      document->analysis_generation = check->generation;
    }
  } else {
    if (!check->error.empty() || !check->result) {
      spdlog::error("checking {} failed: {}", document->uri, check->error);
      check->result = std::make_unique<Analysis>();
      check->result->file = SourceFile(check->path, document->text.text());
    }
    spdlog::debug("checked {} version {}: parse {:.2f} ms, analysis {:.2f} ms ({} of {} functions checked), {} diagnostics", document->uri,
                  check->version, check->parse_ms, check->analyze_ms, check->reuse.checked, check->reuse.functions,
                  check->result->diagnostics.size());
    double took = check->parse_ms + check->analyze_ms;
    if (!opening) document->check_ms = document->check_ms == 0 ? took : 0.7 * document->check_ms + 0.3 * took;
    // A tree the parser gave up on is of no text: the next parse starts afresh.
    if (check->new_tree.get()) document->tree = check->new_tree.gave_up() ? SyntaxTree() : std::move(check->new_tree);
    self->release_later(std::move(document->analysis));
    document->analysis = std::move(check->result);
    document->analysis_version = check->version;
    document->analysis_generation = check->generation;
    self->publish(*document);
    std::vector<Waiting> waiting = std::move(document->waiting);
    document->waiting.clear();
    for (Waiting& request : waiting) self->answer(*document, request);
    self->finish_shutdown_when_idle();
  }
  if (document->check_again || (!self->current(*document) && !document->waiting.empty())) self->start_check(document);
}

// Freeing a large file's analysis takes as long as building parts of it: do it off the loop.
void Server::release_later(std::shared_ptr<const Analysis> analysis) {
  if (!analysis) return;
  struct Release {
    uv_work_t work{};
    std::shared_ptr<const Analysis> analysis;
  };
  auto* release = new Release;
  release->analysis = std::move(analysis);
  release->work.data = release;
  int rc = uv_queue_work(
      loop_, &release->work, [](uv_work_t* work) { static_cast<Release*>(work->data)->analysis.reset(); },
      [](uv_work_t* work, int) { delete static_cast<Release*>(work->data); });
  if (rc != 0) delete release;
}

void Server::publish(Document& document) {
  Converter at(document.uri, document.text);
  notify("textDocument/publishDiagnostics", {{"uri", document.uri},
                                            {"version", document.analysis_version},
                                            {"diagnostics", diagnostics_to_lsp(*document.analysis, at, style_)}});
}

void Server::answer(Document& document, Waiting& request) {
  auto start = Clock::now();
  const Analysis& analysis = *document.analysis;
  Converter at(document.uri, document.text);
  try {
    json result = analysis_requests().at(request.method)(AnswerContext{analysis, at, request.params, markup_, style_});
    reply(request.id, std::move(result));
  } catch (const RequestFailed& e) {
    reply_error(request.id, error_code::request_failed, e.what());
  } catch (const json::exception& e) {
    reply_error(request.id, error_code::invalid_params, e.what());
  } catch (const std::exception& e) {
    spdlog::error("{} failed: {}", request.method, e.what());
    reply_error(request.id, error_code::internal_error, e.what());
  }
  spdlog::debug("{} answered in {:.2f} ms", request.method, milliseconds_since(start));
}

}  // namespace ss::lsp

// ---------------------------------------------------------------------------------------------

namespace {

// A file:// URI for an absolute path, every byte outside RFC 3986's unreserved set and `/` escaped.
std::string file_uri(const std::string& path) {
  std::string out = "file://";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') out += static_cast<char>(c);
    else out += fmt::format("%{:02X}", c);
  }
  return out;
}

// The checkout's docs/errors/, found from where this executable is (build/lsp/shapescript-lsp,
// build/shapescript): the pages diagnostics link to. Empty where none is found (an installed binary).
std::string error_docs_beside_executable() {
  char buffer[4096];
  size_t size = sizeof buffer;
  if (uv_exepath(buffer, &size) != 0) return {};
  std::error_code error;
  std::filesystem::path dir = std::filesystem::weakly_canonical(std::filesystem::path(std::string(buffer, size)), error).parent_path();
  for (int up = 0; up < 4 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::filesystem::path pages = dir / "docs" / "errors";
    if (std::filesystem::is_regular_file(pages / "E0101.md", error)) return file_uri(pages.string() + "/");
    if (dir == dir.parent_path()) break;
  }
  return {};
}

}  // namespace

int run_language_server(int argc, char** argv) {
  std::string log_file, log_level = "info";
  std::optional<std::string> error_docs;
  ss::lsp::ServerOptions options;
  auto usage = [] {
    std::fputs("usage: shapescript-lsp [--log-file PATH] [--log-level trace|debug|info|warn|error|off] [--debounce-ms MAX]\n"
               "                      [--full-check]  (check the whole file after each edit, not only what it reaches)\n"
               "                      [--error-docs URI]  (where diagnostics' codes link: URI + E1701.md; default: this\n"
               "                                           checkout's docs/errors/, none if not found)\n", stderr);
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (i == 1 && arg == "lsp") continue;
    if (arg == "--stdio") continue;
    if (arg == "--help" || arg == "-h") {
      usage();
      return 0;
    }
    if (arg == "--version") {
      std::printf("shapescript-lsp %s\n", SHAPESCRIPT_VERSION);
      return 0;
    }
    const char* v = nullptr;
    if (arg == "--log-file" && (v = value())) log_file = v;
    else if (arg == "--log-level" && (v = value())) log_level = v;
    else if (arg == "--debounce-ms" && (v = value())) options.debounce_ms = std::strtoull(v, nullptr, 10);
    else if (arg == "--error-docs" && (v = value())) error_docs = v;
    else if (arg == "--full-check") options.incremental = false;
    else {
      std::fprintf(stderr, "shapescript-lsp: unknown or incomplete option `%s`\n", argv[i]);
      usage();
      return 2;
    }
  }
  // Logs never go to stdout: it carries the protocol.
  try {
    std::shared_ptr<spdlog::logger> logger;
    if (!log_file.empty()) logger = std::make_shared<spdlog::logger>("lsp", std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file));
    else logger = std::make_shared<spdlog::logger>("lsp", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_level(spdlog::level::from_str(log_level));
    logger->flush_on(spdlog::level::info);
    spdlog::set_default_logger(logger);
  } catch (const spdlog::spdlog_ex& e) {
    std::fprintf(stderr, "shapescript-lsp: can't log to `%s`: %s\n", log_file.c_str(), e.what());
    return 2;
  }
  options.error_docs = error_docs ? *error_docs : error_docs_beside_executable();
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away must not kill us mid-write
  uv_loop_t loop;
  uv_loop_init(&loop);
  int status;
  {
    ss::lsp::Server server(&loop, options);
    status = server.run();
  }
  uv_loop_close(&loop);
  spdlog::default_logger()->flush();
  return status;
}
