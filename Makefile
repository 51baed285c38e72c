# kloop - build, test, run.  `make deps` once (as root), then `make`, `make test`, `make run`.
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   := build
# where the programs go (make asan puts its own elsewhere)
BIN     := bin
TS_DIR  := grammars/node_modules
TS_RT   := $(TS_DIR)/tree-sitter/vendor/tree-sitter/lib
TS_CUDA := $(TS_DIR)/tree-sitter-cuda/src

WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
# Layers (docs/ARCHITECTURE.md): each sees only its own headers and those
# below it, so an include that points up (engine -> sessions, say) fails to build.
# engine/measure's sub-folders, one concept each (docs/ARCHITECTURE.md); a
# header is included by its bare name from any of them
MEASURE_DIRS := harness verdict backend runner compile pool reference profile
MEASURE_INC  := $(MEASURE_DIRS:%=-Iengine/measure/%)
ENGINE_INC := -Iinclude -Iengine $(MEASURE_INC) -Iengine/code -Iengine/llm -I$(TS_RT)/include
# sessions/' sub-folders, one concept each (docs/ARCHITECTURE.md): the
# session model (journal, events, the fold), the running driver, the search,
# the archive; a header is included by its bare name from any of them
SESS_DIRS  := model driver search archive
SESS_DIRS_INC := $(SESS_DIRS:%=-Isessions/%)
SESS_INC   := $(ENGINE_INC) $(SESS_DIRS_INC)
TUI_INC    := $(SESS_INC) -Itui
CLI_INC    := $(TUI_INC) -Icli
KCFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -I/usr/include/cjson -MMD -MP
LIBS    := -lcjson -ldl -lm -pthread
# full RELRO: the GOT is read-only once loaded, so a candidate in the
# runner (kloop-worker --runner) cannot redirect its calls (confine.h)
HARDEN  := -Wl,-z,relro,-z,now
# the innovation archive (sessions/archive/archive_*.c): SQLite with FTS5, Debian's libsqlite3-dev
SQL_LIBS := -lsqlite3
UI_LIBS := -lncursesw -ledit -lcurl

ENGINE_SRC := $(wildcard engine/*.c engine/*/*.c engine/*/*/*.c)
SESS_SRC   := $(wildcard sessions/*/*.c)
CLI_SRC    := $(wildcard cli/*.c)
TUI_SRC    := $(wildcard tui/*.c)
WORKER_SRC := $(wildcard worker/*.c)
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
SESS_OBJ   := $(SESS_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
WORKER_OBJ := $(WORKER_SRC:%.c=$(BUILD)/%.o)
TS_OBJ     := $(BUILD)/ts/runtime.o $(BUILD)/ts/cuda_parser.o $(BUILD)/ts/cuda_scanner.o
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# kloop's own GPU kernels (checks and input generation on the device) and
# the device's peaks (cuBLASLt, loaded at run time: peaks.cu), built where
# nvcc is installed; without them the cuda backend checks on the CPU
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_LIB := $(if $(NVCC),$(BIN)/libkloop-cuda.so)

all: $(BIN)/kloop $(BIN)/kloop-worker $(CUDA_LIB)

CUDA_SRC := engine/measure/backend/device_kernels.cu engine/measure/backend/peaks.cu \
            engine/measure/backend/cupti.cu engine/measure/backend/cupti_range.cu
$(BIN)/libkloop-cuda.so: $(CUDA_SRC)
	@mkdir -p $(BIN)
	$(NVCC) -O3 -std=c++17 -shared -Xcompiler -fPIC --cudart shared \
		-gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90 -o $@ \
		$(CUDA_SRC) -ldl -lpthread

$(TS_RT)/src/lib.c $(TS_CUDA)/parser.c:
	@echo "kloop: the tree-sitter runtime and CUDA grammar are missing: run 'make deps' first" >&2; exit 1

$(ENGINE_OBJ) $(WORKER_OBJ): INC := $(ENGINE_INC)
$(SESS_OBJ): INC := $(SESS_INC) -DKL_SESSIONS
$(TUI_OBJ): INC := $(TUI_INC)
$(CLI_OBJ): INC := $(CLI_INC)
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) $(INC) $(CFLAGS) -c $< -o $@

# third-party generated code: built without -Werror, never edited
$(BUILD)/ts/runtime.o: $(TS_RT)/src/lib.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -O2 -g -w -I$(TS_RT)/include -I$(TS_RT)/src -c $< -o $@
$(BUILD)/ts/cuda_parser.o: $(TS_CUDA)/parser.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -w -I$(TS_CUDA) -c $< -o $@
$(BUILD)/ts/cuda_scanner.o: $(TS_CUDA)/scanner.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -w -I$(TS_CUDA) -c $< -o $@

$(BUILD)/libkloop.a: $(ENGINE_OBJ) $(TS_OBJ)
	@rm -f $@
	ar rcs $@ $^

# a running session (sessions/): the journal, the fold, the driver
$(BUILD)/libkloopsess.a: $(SESS_OBJ)
	@rm -f $@
	ar rcs $@ $^

# the front ends (tui/): the TUI, the line REPL and the command language
$(BUILD)/libkloopui.a: $(TUI_OBJ)
	@rm -f $@
	ar rcs $@ $^

KLOOP_LIBS := $(BUILD)/libkloopui.a $(BUILD)/libkloopsess.a $(BUILD)/libkloop.a

$(BIN)/kloop: $(CLI_OBJ) $(KLOOP_LIBS)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(HARDEN) -o $@ $(CLI_OBJ) $(KLOOP_LIBS) $(LIBS) $(UI_LIBS) $(SQL_LIBS)

$(BIN)/kloop-worker: $(WORKER_OBJ) $(BUILD)/libkloop.a
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) $(HARDEN) -o $@ $^ $(LIBS)

# tests see every layer, and the helpers they share (tests/unit/*.h: check.h,
# slurp.h and the rest, each included where it is used)
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(KLOOP_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) $(CLI_INC) -Itests/unit $(CFLAGS) -o $@ $< $(KLOOP_LIBS) \
		$(LIBS) $(UI_LIBS) $(SQL_LIBS)

test: format-check all $(UNIT_BIN)
	@sh tests/run.sh $(UNIT_BIN)

# the suites that need a GPU (and PyTorch with CUDA), alone: on a GPU
# machine after `make`; each skips with one line where there is none.  They
# share one compile and baseline cache (PyTorch's torch.compile baselines
# are measured once per task, not once per suite)
GPU_E2E = eval_cuda export_cuda sandbox_cuda profile_cuda profiled_cuda torchref torch_serve precision_cuda \
          cutlass_cuda exploits_cuda extension_cuda
KLOOP_GPU_CACHE ?= $(CURDIR)/$(BUILD)/gpu-cache
test-gpu: all
	@mkdir -p $(KLOOP_GPU_CACHE)
	@KLOOP_GPU_CACHE=$(KLOOP_GPU_CACHE) E2E="$(GPU_E2E)" sh tests/run.sh

# .clang-format on every C file of ours (clang-format 14, Debian 12's, from make deps)
FORMAT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find engine sessions tui cli worker tests bench include -name '*.[ch]')
format:
	clang-format -i $(FORMAT_SRC)
format-check:
	@out=$$(for f in $(FORMAT_SRC); do clang-format --dry-run -Werror "$$f" >/dev/null 2>&1 || echo "$$f"; done); \
	if [ -n "$$out" ]; then echo "format-check: not formatted with .clang-format (run 'make format'):" $$out >&2; exit 1; fi

run: all
	./bin/kloop

deps:
	sh scripts/deps.sh

bench: all
	sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kloop/include
	install -m 755 bin/kloop bin/kloop-worker $(CUDA_LIB) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/kloop.h include/kloop_torch.h include/kloop_torch_real.h \
		$(DESTDIR)$(PREFIX)/share/kloop/include/
	cp -r include/kloop_torch include/kloop_torch_real $(DESTDIR)$(PREFIX)/share/kloop/include/
	install -d $(DESTDIR)$(PREFIX)/share/kloop/prompts
	install -m 644 prompts/*.md $(DESTDIR)$(PREFIX)/share/kloop/prompts/
	cp -r tasks $(DESTDIR)$(PREFIX)/share/kloop/
	install -m 644 engine/measure/reference/torchref.py engine/measure/reference/kbexport.py \
		engine/measure/reference/modelnew.py $(DESTDIR)$(PREFIX)/share/kloop/

clean:
	rm -rf $(BUILD) bin tests/out $(ASAN_DIR)

.PHONY: all test test-gpu run deps bench install clean format format-check

# --- make asan (issue 14): everything built with ASan + UBSan (-O1, frame
# pointers, UB fatal) in build-asan/, then the whole suite run on those
# binaries: the unit tests, and the e2e scripts through KLOOP; then the
# readers' fuzzers (clang) for ASAN_FUZZ_SECONDS each.  The data directories
# a build tree finds next to bin/ are linked in.  GCC leaves
# float-cast-overflow out of -fsanitize=undefined: it is named, as a NaN
# converted to an int is the kind of bug the fuzzers found.
# Leak checking is on: every program that ends through exit() is checked by
# LeakSanitizer (third-party leaks in tests/lsan.supp, each with its
# reason).  ASan's and LSan's reports go to files in ASAN_REPORTS, not to
# stderr (which the tests capture and throw away): a leak does not change a
# program's exit status, an ASan or UBSan error ends it as before (UBSan's
# report still on stderr), and tests/asan_reports.sh prints every report
# and fails the run when there is one, even from a program whose exit
# status no test looks at.
ASAN_DIR     := build-asan
ASAN_REPORTS := $(ASAN_DIR)/reports
ASAN_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined,float-cast-overflow \
                -fno-sanitize-recover=undefined
ASAN_ENV     := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:log_path=$(CURDIR)/$(ASAN_REPORTS)/asan \
                LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0:exitcode=0 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
asan: all
	$(MAKE) BUILD=$(ASAN_DIR)/obj BIN=$(ASAN_DIR)/bin NVCC= CFLAGS="$(ASAN_FLAGS)" all \
		$(UNIT_BIN:$(BUILD)/%=$(ASAN_DIR)/obj/%)
	@for d in prompts tasks include engine; do ln -sfn ../$$d $(ASAN_DIR)/$$d; done
	@rm -rf $(ASAN_REPORTS) && mkdir -p $(ASAN_REPORTS)
	@$(ASAN_ENV) KLOOP=$(ASAN_DIR)/bin/kloop KILL9_N=$(ASAN_KILL9_N) \
		sh tests/run.sh $(UNIT_BIN:$(BUILD)/%=$(ASAN_DIR)/obj/%); rc=$$?; \
		sh tests/asan_reports.sh $(ASAN_REPORTS) || rc=1; exit $$rc
	$(MAKE) fuzz-readers FUZZ_SECONDS=$(ASAN_FUZZ_SECONDS)
# under the sanitizers the kill -9 suite runs 50 kills (make test: 200), and
# each reader's fuzzer a short while
ASAN_KILL9_N      := 50
ASAN_FUZZ_SECONDS := 10
.PHONY: asan
-include $(ENGINE_OBJ:.o=.d) $(SESS_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TUI_OBJ:.o=.d) $(WORKER_OBJ:.o=.d)

# --- code intelligence (issue 4): kloop's tree-sitter queries, embedded ----
QUERY_SCM := $(sort $(wildcard grammars/queries/*.scm))
$(BUILD)/gen/queries.c: $(QUERY_SCM) scripts/embed_queries.sh
	@mkdir -p $(dir $@)
	sh scripts/embed_queries.sh $(QUERY_SCM) >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/queries.o: $(BUILD)/gen/queries.c engine/code/syntax.h
	$(CC) $(KCFLAGS) $(ENGINE_INC) $(CFLAGS) -c $< -o $@
$(BUILD)/libkloop.a: $(BUILD)/gen/queries.o
# the outline command's test compiles cli/cmd_outline.c (and the flag table) into itself
$(BUILD)/tests/test_cmd_outline: cli/cmd_outline.c cli/flags.c
# the configuration's test compiles the flag table into itself
$(BUILD)/tests/test_config: cli/flags.c

# --- fuzzing (issues 4, 14): `make fuzz FUZZ_SECONDS=60` runs each libFuzzer
# target tests/fuzz/fuzz_*.c (clang, ASan + UBSan) for FUZZ_SECONDS: syntax
# (from tests/fuzz/corpus and the tree-sitter fixtures), and the readers of
# untrusted bytes, each from its seeds in tests/fuzz/seeds/NAME: journal,
# sse, reply (fences, candidates, ideas), task (task.json), protocol (the
# worker's line reader).  New inputs and crash-* files land in build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O2 $(FUZZ_SAN) -Iinclude -Iengine -Iengine/code -Iengine/llm \
                $(MEASURE_INC) $(SESS_DIRS_INC) -I$(TS_RT)/include -I$(TS_RT)/src -I/usr/include/cjson
FUZZ_SRC     := $(wildcard engine/code/*.c) engine/util.c engine/rng.c engine/task.c engine/task_load.c engine/task_find.c engine/suggest.c
FUZZ_TS      := $(FUZZ_DIR)/ts_runtime.o $(FUZZ_DIR)/ts_parser.o $(FUZZ_DIR)/ts_scanner.o

# the runtime: edge coverage only (comparison tracing made it 5x slower)
$(FUZZ_DIR)/ts_runtime.o: $(TS_RT)/src/lib.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O2 -w $(FUZZ_SAN) \
		-fsanitize-coverage=inline-8bit-counters,pc-table \
		-I$(TS_RT)/include -I$(TS_RT)/src -c $< -o $@
# the grammar's tables: sanitized, not coverage-instrumented (it is 600k lines)
$(FUZZ_DIR)/ts_parser.o: $(TS_CUDA)/parser.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O2 -w -fsanitize=address -I$(TS_CUDA) -c $< -o $@
$(FUZZ_DIR)/ts_scanner.o: $(TS_CUDA)/scanner.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -g -O2 -w $(FUZZ_SAN) -fsanitize=fuzzer-no-link -I$(TS_CUDA) -c $< -o $@
$(FUZZ_DIR)/fuzz_syntax: tests/fuzz/fuzz_syntax.c $(FUZZ_SRC) $(wildcard engine/*.h engine/code/*.h) \
		$(BUILD)/gen/queries.c $(FUZZ_TS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_syntax.c $(FUZZ_SRC) \
		$(BUILD)/gen/queries.c $(FUZZ_TS) -lcjson -lm -pthread
# the readers of untrusted bytes: each target with the sources it needs
FUZZ_READERS := journal sse reply task protocol
FUZZ_SRC_journal  := sessions/model/journal.c sessions/model/session.c sessions/model/state.c \
                     sessions/model/state_best.c sessions/model/event.c sessions/model/event_search.c \
                     sessions/model/replay.c sessions/model/search_settings.c engine/suggest.c \
                     engine/measure/verdict/status.c engine/measure/verdict/result.c \
                     engine/measure/verdict/verdict.c \
                     engine/llm/ideas.c engine/code/fence.c engine/util.c engine/json.c
FUZZ_SRC_sse      := engine/llm/sse.c engine/util.c
FUZZ_SRC_task     := engine/task.c engine/task_load.c engine/task_find.c engine/suggest.c engine/util.c
FUZZ_SRC_protocol := engine/measure/pool/protocol.c engine/json.c engine/util.c
FUZZ_SRC_reply    := engine/llm/reply.c engine/llm/ideas.c $(FUZZ_SRC) $(BUILD)/gen/queries.c $(FUZZ_TS) \
                     $(BUILD)/libkloop.a
FUZZ_HDRS := $(wildcard include/*.h engine/*.h engine/*/*.h engine/*/*/*.h sessions/*/*.h)
define fuzz_rule
$$(FUZZ_DIR)/fuzz_$(1): tests/fuzz/fuzz_$(1).c $$(FUZZ_SRC_$(1)) $$(FUZZ_HDRS)
	@mkdir -p $$(FUZZ_DIR)
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ tests/fuzz/fuzz_$(1).c $$(FUZZ_SRC_$(1)) \
		-lcjson -lm -pthread
endef
$(foreach t,$(FUZZ_READERS),$(eval $(call fuzz_rule,$(t))))
FUZZ_OPTS := -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=4096 -print_final_stats=1

fuzz: $(FUZZ_DIR)/fuzz_syntax $(FUZZ_READERS:%=$(FUZZ_DIR)/fuzz_%)
	@mkdir -p $(FUZZ_DIR)/corpus
	cd $(FUZZ_DIR) && ./fuzz_syntax $(FUZZ_OPTS) -max_len=16384 corpus $(CURDIR)/tests/fuzz/corpus \
		$(CURDIR)/tests/fixtures/cuda_src
	@$(MAKE) --no-print-directory fuzz-readers
# the readers only (make asan runs them briefly: FUZZ_SECONDS=10)
fuzz-readers: $(FUZZ_READERS:%=$(FUZZ_DIR)/fuzz_%)
	@set -e; for t in $(FUZZ_READERS); do \
		mkdir -p $(FUZZ_DIR)/corpus_$$t; \
		echo "fuzz_$$t: $(FUZZ_SECONDS) s"; \
		(cd $(FUZZ_DIR) && ./fuzz_$$t $(FUZZ_OPTS) -max_len=65536 corpus_$$t \
			$(CURDIR)/tests/fuzz/seeds/$$t 2>fuzz_$$t.log) || \
			{ tail -n 40 $(FUZZ_DIR)/fuzz_$$t.log; echo "fuzz_$$t: FAILED (see $(FUZZ_DIR)/fuzz_$$t.log)"; exit 1; }; \
		grep -E '^stat::number_of_executed_units|^Done' $(FUZZ_DIR)/fuzz_$$t.log | tail -2; \
	done
.PHONY: fuzz fuzz-readers
