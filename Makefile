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
LIBS    := -lcjson -ldl -lm
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

all: bin/kloop bin/kloop-worker

$(TS_RT)/src/lib.c $(TS_CUDA)/parser.c:
	@echo "kloop: the tree-sitter runtime and CUDA grammar are missing: run 'make deps' first" >&2; exit 1

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(KCFLAGS) $(CFLAGS) -c $< -o $@

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
	install -m 755 bin/kloop bin/kloop-worker $(DESTDIR)$(PREFIX)/bin/
	install -m 644 include/kloop.h $(DESTDIR)$(PREFIX)/share/kloop/include/
	cp -r tasks $(DESTDIR)$(PREFIX)/share/kloop/

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
