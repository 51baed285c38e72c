; highlights.scm - kloop's highlight query for C, C++ and CUDA sources, read
; against the tree-sitter-cuda grammar (C++ plus CUDA's qualifiers and
; <<< >>> launches).  It stands alone: nothing is inherited from the
; grammar's own queries.
;
; When two patterns capture the same node, the earlier pattern wins; a
; capture nested inside another (a string inside a #include) wins over the
; outer one.  Predicates: #eq?, #any-of?, #match? (POSIX extended regular
; expressions on the node's text), and their not- forms.

; ---- comments and literals ----------------------------------------------

(comment) @comment

(string_literal) @string
(raw_string_literal) @string
(system_lib_string) @string
(char_literal) @character
(escape_sequence) @string.escape

(number_literal) @number

[
  (true)
  (false)
  (null)
] @constant.builtin

(this) @variable.builtin

; ---- CUDA -----------------------------------------------------------------

[
  "__global__"
  "__device__"
  "__host__"
  "__forceinline__"
  "__noinline__"
  "__shared__"
  "__constant__"
  "__managed__"
  "__local__"
  "__grid_constant__"
  "__launch_bounds__"
  "__restrict__"
] @keyword.cuda

; the <<<grid, block, smem, stream>>> of a kernel launch
[
  "<<<"
  ">>>"
] @punctuation.launch

((identifier) @variable.builtin.cuda
  (#any-of? @variable.builtin.cuda "threadIdx" "blockIdx" "blockDim" "gridDim" "warpSize"))

; the kernel named by a launch
(call_expression
  function: (identifier) @function.kernel
  (kernel_call_syntax))
(call_expression
  function: (template_function
    name: (identifier) @function.kernel)
  (kernel_call_syntax))
(call_expression
  function: (qualified_identifier
    name: (identifier) @function.kernel)
  (kernel_call_syntax))
(call_expression
  function: (qualified_identifier
    name: (template_function
      name: (identifier) @function.kernel))
  (kernel_call_syntax))

; intrinsics and atomics: __syncthreads, __shfl_xor_sync, __expf, atomicAdd
((call_expression
  function: (identifier) @function.builtin)
  (#match? @function.builtin "^(__[A-Za-z0-9_]+|atomic[A-Z][A-Za-z]*)$"))

; CUDA and fixed-width vector and scalar types
((type_identifier) @type.builtin
  (#match? @type.builtin "^(dim3|half2?|__half2?|__nv_bfloat162?|nv_bfloat162?|(u?(char|short|int|long|longlong)|float|double)[1-4]|cuda(Stream|Error|Event)_t|size_t|ptrdiff_t|u?int(8|16|32|64)_t)$"))

; ---- preprocessor ---------------------------------------------------------

(preproc_def
  name: (identifier) @constant.macro)
(preproc_function_def
  name: (identifier) @function.macro)
(preproc_params
  (identifier) @variable.parameter)
(preproc_call
  argument: (preproc_arg) @preproc.arg)

[
  "#include"
  "#define"
  "#if"
  "#ifdef"
  "#ifndef"
  "#else"
  "#elif"
  "#elifdef"
  "#elifndef"
  "#endif"
  "defined"
  (preproc_directive)
] @preproc

; ---- functions ------------------------------------------------------------

(function_declarator
  declarator: (identifier) @function)
(function_declarator
  declarator: (qualified_identifier
    name: (identifier) @function))
(function_declarator
  declarator: (field_identifier) @function.method)
(function_declarator
  declarator: (operator_name) @function.method)
(function_declarator
  declarator: (destructor_name) @function.method)

(call_expression
  function: (identifier) @function.call)
(call_expression
  function: (qualified_identifier
    name: (identifier) @function.call))
(call_expression
  function: (field_expression
    field: (field_identifier) @function.method.call))
(template_function
  name: (identifier) @function.call)
(template_method
  name: (field_identifier) @function.method.call)

; ---- types and names ------------------------------------------------------

[
  (primitive_type)
  (sized_type_specifier)
  (auto)
] @type.builtin

(type_identifier) @type
(namespace_identifier) @namespace
(field_identifier) @property
(statement_identifier) @label

(parameter_declaration
  declarator: (identifier) @variable.parameter)
(parameter_declaration
  declarator: (pointer_declarator
    declarator: (identifier) @variable.parameter))
(parameter_declaration
  declarator: (reference_declarator
    (identifier) @variable.parameter))

; ALL_CAPS names are constants (usually macros)
((identifier) @constant
  (#match? @constant "^[A-Z][A-Z0-9_]*$"))

; ---- keywords -------------------------------------------------------------

[
  "if"
  "else"
  "for"
  "while"
  "do"
  "switch"
  "case"
  "default"
  "break"
  "continue"
  "return"
  "goto"
  "try"
  "catch"
  "throw"
  "co_await"
  "co_return"
  "co_yield"
] @keyword.control

[
  "alignas"
  "alignof"
  "asm"
  "__asm__"
  "__asm"
  "__volatile__"
  "__attribute__"
  "__extension__"
  "class"
  "concept"
  "const"
  "consteval"
  "constexpr"
  "constinit"
  "decltype"
  "delete"
  "enum"
  "explicit"
  "extern"
  "final"
  "friend"
  "inline"
  "mutable"
  "namespace"
  "new"
  "noexcept"
  "operator"
  "override"
  "private"
  "protected"
  "public"
  "register"
  "requires"
  "restrict"
  "sizeof"
  "static"
  "static_assert"
  "struct"
  "template"
  "thread_local"
  "typedef"
  "typename"
  "union"
  "using"
  "virtual"
  "volatile"
  "offsetof"
  (storage_class_specifier)
  (virtual_specifier)
] @keyword

; ---- operators and punctuation --------------------------------------------

(template_argument_list
  [
    "<"
    ">"
  ] @punctuation.bracket)
(template_parameter_list
  [
    "<"
    ">"
  ] @punctuation.bracket)

[
  "="
  "+"
  "-"
  "*"
  "/"
  "%"
  "++"
  "--"
  "+="
  "-="
  "*="
  "/="
  "%="
  "&="
  "|="
  "^="
  "<<="
  ">>="
  "=="
  "!="
  "<"
  ">"
  "<="
  ">="
  "<=>"
  "&&"
  "||"
  "!"
  "~"
  "&"
  "|"
  "^"
  "<<"
  ">>"
  "->"
  "?"
] @operator

[
  "."
  ","
  ";"
  "::"
] @punctuation.delimiter

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket
