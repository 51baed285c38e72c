; tunables.scm - where kloop looks for integer constants worth sweeping.
; engine/tunables.c reads the captures: @name names the constant, @value
; holds its literal (checked there to be an integer), and the capture
; naming the pattern (@define, @decl, @enum, @tparam, @dim3) says which
; kind it is.  Launch configurations and template arguments of launches
; come from the outline instead.

; #define TILE 16
(preproc_def
  name: (identifier) @name
  value: (preproc_arg) @value) @define

; const int TILE = 16;  constexpr unsigned WARPS = 4u;  (qualifiers checked in C)
(declaration
  declarator: (init_declarator
    declarator: (identifier) @name
    value: (number_literal) @value)) @decl

; enum { UNROLL = 4 };
(enumerator
  name: (identifier) @name
  value: (number_literal) @value) @enum

; template <int BM = 64>
(template_parameter_list
  (optional_parameter_declaration
    declarator: (identifier) @name
    default_value: (number_literal) @value)) @tparam

; dim3 block(128, 2);  dim3 grid{4, 2};
((declaration
  type: (type_identifier) @type
  declarator: (init_declarator
    declarator: (identifier) @name
    value: [
      (argument_list)
      (initializer_list)
    ] @value)) @dim3
  (#eq? @type "dim3"))

; dim3 block = dim3(128, 2);
((declaration
  type: (type_identifier) @type
  declarator: (init_declarator
    declarator: (identifier) @name
    value: (call_expression
      function: (identifier) @ctor
      arguments: (argument_list) @value))) @dim3
  (#eq? @type "dim3")
  (#eq? @ctor "dim3"))
