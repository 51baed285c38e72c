# kloop - build, test, run.  `make deps` once (as root), then `make`, `make test`, `make run`.
CC      ?= cc
PREFIX  ?= /usr/local
BUILD   := build
TS_DIR  := grammars/node_modules
TS_RT   := $(TS_DIR)/tree-sitter/vendor/tree-sitter/lib
TS_CUDA := $(TS_DIR)/tree-sitter-cuda/src

WARN    := -Wall -Wextra -Werror
CFLAGS  ?= -O2 -g
KCFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -Iinclude -Iengine -Isessions -Icli -Itui \
           -I$(TS_RT)/include -I/usr/include/cjson -MMD -MP
LIBS    := -lcjson -ldl -lm -pthread
UI_LIBS := -lncursesw -ledit -lcurl

ENGINE_SRC := $(filter-out engine/worker_main.c,$(wildcard engine/*.c)) $(wildcard sessions/*.c)
CLI_SRC    := $(wildcard cli/*.c)
TUI_SRC    := $(wildcard tui/*.c)
ENGINE_OBJ := $(ENGINE_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ    := $(CLI_SRC:%.c=$(BUILD)/%.o)
TUI_OBJ    := $(TUI_SRC:%.c=$(BUILD)/%.o)
TS_OBJ     := $(BUILD)/ts/runtime.o $(BUILD)/ts/cuda_parser.o $(BUILD)/ts/cuda_scanner.o
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# kloop's own GPU kernels (checks and input generation on the device), built
# where nvcc is installed; without them the cuda backend checks on the CPU
NVCC    ?= $(shell command -v nvcc 2>/dev/null || { test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc; })
CUDA_LIB := $(if $(NVCC),bin/libkloop-cuda.so)

all: bin/kloop bin/kloop-worker $(CUDA_LIB)

bin/libkloop-cuda.so: engine/device_kernels.cu
	@mkdir -p bin
	$(NVCC) -O3 -std=c++17 -shared -Xcompiler -fPIC --cudart shared \
		-gencode arch=compute_75,code=compute_75 -gencode arch=compute_90,code=sm_90 -o $@ $<

$(TS_RT)/src/lib.c $(TS_CUDA)/parser.c:
	@echo "kloop: the tree-sitter runtime and CUDA grammar are missing: run 'make deps' first" >&2; exit 1

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) $(CFLAGS) -c $< -o $@

# the tree walk reads the pinned runtime's internal headers (engine/tswalk.c)
$(BUILD)/engine/tswalk.o: KCFLAGS += -I$(TS_RT)/src -Wno-unused-parameter

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

# the front ends (tui/): the TUI, the line REPL and the command language
$(BUILD)/libkloopui.a: $(TUI_OBJ)
	@rm -f $@
	ar rcs $@ $^

bin/kloop: $(CLI_OBJ) $(BUILD)/libkloopui.a $(BUILD)/libkloop.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libkloopui.a $(BUILD)/libkloop.a $(LIBS) $(UI_LIBS)

bin/kloop-worker: $(BUILD)/engine/worker_main.o $(BUILD)/libkloop.a
	@mkdir -p bin
	$(CC) $(CFLAGS) -rdynamic -o $@ $^ $(LIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/check.h $(BUILD)/libkloopui.a $(BUILD)/libkloop.a
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) -Itests/unit $(CFLAGS) -o $@ $< $(BUILD)/libkloopui.a $(BUILD)/libkloop.a \
		$(LIBS) $(UI_LIBS)

test: all $(UNIT_BIN)
	@sh tests/run.sh $(UNIT_BIN)

run: all
	./bin/kloop

deps:
	sh scripts/deps.sh

bench: all
	sh bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kloop/include
	install -m 755 bin/kloop bin/kloop-worker $(CUDA_LIB) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/kloop.h $(DESTDIR)$(PREFIX)/share/kloop/include/
	install -d $(DESTDIR)$(PREFIX)/share/kloop/prompts
	install -m 644 prompts/*.md $(DESTDIR)$(PREFIX)/share/kloop/prompts/
	cp -r tasks $(DESTDIR)$(PREFIX)/share/kloop/
	install -m 644 engine/torchref.py $(DESTDIR)$(PREFIX)/share/kloop/

clean:
	rm -rf $(BUILD) bin tests/out

.PHONY: all test run deps bench install clean
-include $(ENGINE_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TUI_OBJ:.o=.d)

# --- code intelligence (issue 4): kloop's tree-sitter queries, embedded ----
QUERY_SCM := $(sort $(wildcard grammars/queries/*.scm))
$(BUILD)/gen/queries.c: $(QUERY_SCM) scripts/embed_queries.sh
	@mkdir -p $(dir $@)
	sh scripts/embed_queries.sh $(QUERY_SCM) >$@.tmp && mv $@.tmp $@
$(BUILD)/gen/queries.o: $(BUILD)/gen/queries.c engine/syntax.h
	$(CC) $(KCFLAGS) $(CFLAGS) -c $< -o $@
$(BUILD)/libkloop.a: $(BUILD)/gen/queries.o
# the outline command's test compiles cli/cmd_outline.c into itself
$(BUILD)/tests/test_cmd_outline: cli/cmd_outline.c

# --- fuzzing (issue 4): `make fuzz FUZZ_SECONDS=60` runs the libFuzzer target
# tests/fuzz/fuzz_syntax.c (clang, ASan + UBSan) from tests/fuzz/corpus and the tree-sitter fixtures;
# new inputs and crash-* files land in build/fuzz/.
FUZZ_SECONDS ?= 60
FUZZ_CC      ?= clang
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -g -O2 $(FUZZ_SAN) -Iengine -I$(TS_RT)/include -I$(TS_RT)/src \
                -I/usr/include/cjson
FUZZ_SRC     := engine/syntax.c engine/highlight.c engine/hlmatch.c engine/tswalk.c \
                engine/outline.c engine/splice.c engine/tunables.c engine/util.c
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
$(FUZZ_DIR)/fuzz_syntax: tests/fuzz/fuzz_syntax.c $(FUZZ_SRC) $(wildcard engine/*.h) \
		$(BUILD)/gen/queries.c $(FUZZ_TS)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ tests/fuzz/fuzz_syntax.c $(FUZZ_SRC) \
		$(BUILD)/gen/queries.c $(FUZZ_TS) -lcjson -lm -pthread
fuzz: $(FUZZ_DIR)/fuzz_syntax
	@mkdir -p $(FUZZ_DIR)/corpus
	cd $(FUZZ_DIR) && ./fuzz_syntax -max_total_time=$(FUZZ_SECONDS) -max_len=16384 \
		-timeout=30 -rss_limit_mb=4096 -print_final_stats=1 corpus $(CURDIR)/tests/fuzz/corpus \
		$(CURDIR)/tests/fixtures/cuda_src
.PHONY: fuzz
