// The server: JSON-RPC dispatch, open documents, and the scheduling of checks.
//
// Checking runs on libuv's thread pool, at most one check per document at a time: at once, unless
// the document's recent checks are slower than the debounce cap and edits come faster than they
// finish, then after the cap. A check works on a snapshot (text, a copy of the edited tree, the version); when it
// finishes, its result is kept only if the document has not changed since, and requests that need
// the current version's analysis wait for it.
#pragma once
#include <uv.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "check/analysis.h"
#include "answers.h"
#include "syntax/syntax.h"
#include "document_text.h"
#include "transport.h"

namespace ss::lsp {

// How long an edit waits before its check: the cap when the document's checks take at least the
// cap (`check_ms`, a moving average) and the edit came sooner after the last than a check takes;
// else 0. Edits made during a check coalesce into the next one whatever this says.
uint64_t edit_debounce_ms(double check_ms, std::optional<double> since_last_edit_ms, uint64_t cap_ms);

struct ServerOptions {
  // The wait after an edit when checks take longer than this and edits come faster than checks
  // finish (someone typing); none otherwise.
  uint64_t debounce_ms = 30;
  // Check again only the functions an edit can reach, reusing the last analysis for the rest
  // (analyze_incremental); off (--full-check), every check checks the whole file.
  bool incremental = true;
  std::string error_docs;  // URI prefix of docs/errors/ pages that diagnostics link to; empty: none
  int input_fd = 0, output_fd = 1;  // where the protocol is read and written: stdin and stdout
};

// How deep a message's JSON may nest; a deeper one is answered with a parse error.
constexpr int kMaxJsonDepth = 64;

// JSON-RPC and LSP error codes.
namespace error_code {
constexpr int parse_error = -32700, invalid_request = -32600, method_not_found = -32601, invalid_params = -32602,
              internal_error = -32603, server_not_initialized = -32002, request_cancelled = -32800,
              request_failed = -32803;
}

class Server {
 public:
  Server(uv_loop_t* loop, ServerOptions options);
  ~Server();
  // Runs until `exit` or the end of input; returns the process's exit status.
  int run();

 private:
  struct Waiting {
    json id;
    std::string method;
    json params;
  };
  struct Document {
    Server* server = nullptr;  // its owner, which its timer's callback needs
    std::string uri;
    int64_t version = 0;
    TextDocument text;
    SyntaxTree tree;  // the last parse, edited since with every change
    std::atomic<int64_t> latest_version{0};
    // Its last analysis; a check takes it (analyze_incremental takes the previous one apart), and
    // requests wait for the check's.
    std::shared_ptr<Analysis> analysis;
    int64_t analysis_version = -1;
    uint64_t analysis_generation = 0;
    uv_timer_t* timer = nullptr;
    bool checking = false;       // a check is on the thread pool
    bool check_again = false;    // the document changed while it was
    bool closed = false;
    double check_ms = 0;         // what its checks take, a moving average: whether an edit waits
    std::optional<std::chrono::steady_clock::time_point> last_edit;  // ... and when the last came
    std::vector<Waiting> waiting;
  };
  struct Check;

  void receive(std::string_view body);
  void bad_frame(std::string_view problem);
  void dispatch(json& message);
  void request(const json& id, const std::string& method, json& params);
  void notification(const std::string& method, json& params);

  void reply(const json& id, json result);
  void reply_error(const json& id, int code, const std::string& message);
  void notify(const std::string& method, json params);

  json initialize(const json& params);
  void configure(const json& settings);
  void did_open(const json& params);
  void did_change(const json& params);
  void did_close(const json& params);
  void did_save(const json& params);
  void cancel(const json& params);

  std::shared_ptr<Document> find(const json& params) const;
  bool current(const Document& document) const;
  void schedule(const std::shared_ptr<Document>& document, uint64_t delay_ms);
  void start_check(const std::shared_ptr<Document>& document);
  static void run_check(uv_work_t* work);
  static void finish_check(uv_work_t* work, int status);
  void publish(Document& document);
  void release_later(std::shared_ptr<const Analysis> analysis);
  void answer(Document& document, Waiting& request);
  void begin_exit(int status);
  void finish_shutdown_when_idle();

  uv_loop_t* loop_;
  ServerOptions options_;
  StdioTransport transport_;
  std::map<std::string, std::shared_ptr<Document>> documents_;
  std::vector<Check*> checks_;  // on the thread pool
  DiagnosticStyle style_;  // the serving codes' severity (a setting), and the error pages' location
  ClientMarkup markup_;  // from the client's capabilities at initialize
  uint64_t generation_ = 1;  // bumped when settings change what a check produces
  bool initialized_ = false, shutdown_ = false, exiting_ = false;
  int exit_status_ = 1;
  // `shutdown` is answered once the requests waiting for checks are; an `exit` before then waits too.
  std::optional<json> shutdown_reply_;
  bool exit_after_shutdown_ = false;
};

}  // namespace ss::lsp
