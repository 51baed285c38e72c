/*
 * torchext.c - a candidate's form and language from its name and text, the
 * entry point an extension names, the words for what the ATen stand-in
 * lacks, and the form a verdict records (torchext_modelnew.c makes a
 * ModelNew one source).
 */
#include "torchext.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "compile.h"
#include "util.h"

static const char *const formNames[] = {"kernel", "extension", "modelnew"};

const char *torchext_form_name(enum torchext_form f)
{
	return (unsigned)f < 3 ? formNames[f] : "kernel";
}

int torchext_form_parse(const char *z, enum torchext_form *pOut)
{
	for (int i = 0; z && i < 3; i++)
		if (!strcmp(z, formNames[i])) {
			*pOut = (enum torchext_form)i;
			return 0;
		}
	return -1;
}

static int ends_with(const char *z, const char *suffix)
{
	size_t n = strlen(z), m = strlen(suffix);
	return n >= m && !strcmp(z + n - m, suffix);
}

/* 1 when some line of z[0..n) is an #include of a PyTorch header */
static int includes_torch(const char *z, size_t n)
{
	static const char *const dirs[] = {"torch/", "ATen/", "c10/"};
	for (size_t i = 0; i < n;) {
		size_t k = i;
		while (k < n && (z[k] == ' ' || z[k] == '\t'))
			k++;
		if (n - k > 9 && z[k] == '#') {
			k++;
			while (k < n && (z[k] == ' ' || z[k] == '\t'))
				k++;
			if (n - k > 8 && !memcmp(z + k, "include", 7)) {
				k += 7;
				while (k < n && (z[k] == ' ' || z[k] == '\t'))
					k++;
				if (k < n && (z[k] == '<' || z[k] == '"'))
					for (size_t d = 0; d < 3; d++)
						if (n - k - 1 > strlen(dirs[d]) &&
						    !memcmp(z + k + 1, dirs[d], strlen(dirs[d])))
							return 1;
			}
		}
		while (i < n && z[i] != '\n')
			i++;
		i++;
	}
	return 0;
}

/* 1 when z[0..n) names its functions itself (PYBIND11_MODULE or
 * TORCH_LIBRARY) */
static int has_module(const char *z, size_t n)
{
	return memmem(z, n, "PYBIND11_MODULE", 15) || memmem(z, n, "TORCH_LIBRARY", 13);
}

static char *code_only(const char *z, size_t n);
static int ident_char(char c);
static int param_kinds(const char *z, size_t a, size_t b, char *zOut, size_t nOut);

/* the functions bare extension z[0..n) defines at file scope with a tensor
 * parameter: their count, and into zOut "forward" where it is one of them,
 * else their names (", " between); 0 for a text with a module of its own,
 * no torch header, or a kl_run */
static int torchext_bare_entries(const char *z, size_t n, char *zOut, size_t nOut)
{
	if (nOut)
		zOut[0] = 0;
	if (!includes_torch(z, n))
		return 0;
	char *c = code_only(z, n);
	if (has_module(c, n) || memmem(c, n, "kl_run", 6)) {
		free(c); /* its own module; or a kernel of kloop's form */
		return 0;
	}
	/* preprocessor lines (a macro's body, continued lines) blanked too */
	for (size_t i = 0; i < n; i++) {
		size_t k = i;
		while (k < n && (c[k] == ' ' || c[k] == '\t'))
			k++;
		if (k < n && c[k] == '#')
			for (; k < n && c[k] != '\n'; k++) {
				if (c[k] == '\\' && k + 1 < n && c[k + 1] == '\n')
					c[k++] = ' ';
				c[k] = ' ';
			}
		while (k < n && c[k] != '\n')
			k++;
		i = k;
	}
	int count = 0, depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i] == '{' || c[i] == '}') {
			depth += c[i] == '{' ? 1 : -1;
			continue;
		}
		if (depth != 0 || !ident_char(c[i]) || (i > 0 && ident_char(c[i - 1])))
			continue;
		size_t a = i;
		while (i < n && ident_char(c[i]))
			i++;
		size_t e = i; /* the name is c[a..e) */
		size_t p = a;
		while (p > 0 && isspace((unsigned char)c[p - 1]))
			p--;
		size_t k = e;
		while (k < n && isspace((unsigned char)c[k]))
			k++;
		if (k >= n || c[k] != '(' || (p > 0 && (c[p - 1] == ':' || c[p - 1] == '.')) ||
		    isdigit((unsigned char)c[a])) {
			i = e - 1;
			continue;
		}
		size_t pa = k + 1, q = pa;
		int d = 1;
		for (; q < n && d; q++)
			d += c[q] == '(' ? 1 : c[q] == ')' ? -1 : 0;
		if (d)
			break;
		size_t pb = q - 1; /* at its ')' */
		while (q < n && (isspace((unsigned char)c[q]) || ident_char(c[q])))
			q++; /* const, noexcept */
		char kinds[64];
		if (q < n && c[q] == '{' && param_kinds(c, pa, pb, kinds, sizeof kinds) == 0 &&
		    strchr(kinds, 't') && !(e - a == 6 && !memcmp(c + a, "kl_run", 6))) {
			count++;
			size_t have = strlen(zOut);
			if (!strcmp(zOut, "forward"))
				; /* kept */
			else if (e - a == 7 && !memcmp(c + a, "forward", 7))
				snprintf(zOut, nOut, "forward");
			else if (have + (e - a) + 3 < nOut)
				snprintf(zOut + have, nOut - have, "%s%.*s", have ? ", " : "",
				         (int)(e - a), c + a);
		}
		i = pb;
	}
	free(c);
	return count;
}

int torchext_is_extension(const char *z, size_t n)
{
	char names[256];
	return includes_torch(z, n) &&
	       (has_module(z, n) || torchext_bare_entries(z, n, names, sizeof names) != 0);
}

enum torchext_form torchext_form_of(const char *zName, const char *z, size_t n)
{
	if (zName && ends_with(zName, ".py"))
		return TORCHEXT_MODELNEW;
	return torchext_is_extension(z, n) ? TORCHEXT_EXTENSION : TORCHEXT_KERNEL;
}

/* z as a C string literal's contents: an identifier's characters, others '?' */
static void add_ident(strbuf *sb, const char *z)
{
	for (; *z; z++)
		sb_addf(sb, "%c", isalnum((unsigned char)*z) || *z == '_' || *z == '.' ? *z : '?');
}

char *torchext_with_init(const char *z, size_t n, const struct task *t, const char *zBase,
                         size_t *pn)
{
	strbuf sb = STRBUF_INIT;
	sb_add(&sb, z, n);
	if (t && t->nInit > 0) {
		sb_addf(&sb, "%s#line 1 \"%s: kloop's get_init_inputs()\"\n",
		        n && z[n - 1] != '\n' ? "\n" : "", zBase);
		sb_adds(&sb, "static const ::kl_torch::init_value kl_torch_init_values_[] = {");
		for (int i = 0; i < t->nInit; i++) {
			const struct task_init *v = &t->aInit[i];
			static const char *const kinds[] = {"0", "::kl_torch::ARG_INT",
			                                    "::kl_torch::ARG_FLOAT",
			                                    "::kl_torch::ARG_BOOL"};
			sb_addf(&sb, "%s{%s, %lldLL, %.17g, \"", i ? ", " : "", kinds[v->kind],
			        v->kind == TASK_INIT_FLOAT ? 0 : v->i,
			        v->kind == TASK_INIT_FLOAT ? v->f : 0.0);
			add_ident(&sb, v->zName);
			sb_adds(&sb, "\", \"");
			add_ident(&sb, v->zType);
			sb_adds(&sb, "\"}");
		}
		sb_addf(&sb,
		        "};\nstatic ::kl_torch::init_registrar "
		        "kl_torch_init_(kl_torch_init_values_, %d);\n",
		        t->nInit);
	}
	/* a bare extension (CUDA-L2's kernels: the module is built apart):
	 * the PYBIND11_MODULE load_inline's functions= would write for it */
	char entry[256];
	if (torchext_bare_entry(z, n, entry, sizeof entry) > 0)
		sb_addf(
		    &sb,
		    "%s#line 1 \"%s: kloop's module for it (the file has no PYBIND11_MODULE)\"\n"
		    "PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)\n{\n\tm.def(\"%s\", &%s);\n}\n",
		    sb.len && sb.buf[sb.len - 1] != '\n' ? "\n" : "", zBase, entry, entry);
	*pn = sb.len;
	return sb_detach(&sb);
}

int torchext_known_name(const char *zName)
{
	return ends_with(zName, ".py") || compile_lang_from_name(zName) >= 0;
}

int torchext_lang_of(const char *zName, const char *z, size_t n)
{
	enum torchext_form f = torchext_form_of(zName, z, n);
	int lang = compile_lang_from_name(zName);
	if (f == TORCHEXT_KERNEL || lang == LANG_CUDA)
		return lang;
	if (f == TORCHEXT_EXTENSION && lang < 0)
		return -1;
	return memmem(z, n, "__global__", 10) || memmem(z, n, "<<<", 3) ? LANG_CUDA : LANG_CPP;
}

int torchext_check_backend(const char *zPath, const char *z, size_t n, const char *zBackend,
                           char *err)
{
	const char *base = strrchr(zPath, '/') ? strrchr(zPath, '/') + 1 : zPath;
	enum torchext_form f = torchext_form_of(base, z, n);
	int lang = torchext_lang_of(base, z, n), cuda = !strcmp(zBackend, "cuda");
	if (lang == LANG_CUDA && !cuda)
		return kl_err(
		    err,
		    "%s: a %s needs the cuda backend (--backend cuda), but the backend is "
		    "%s%s",
		    zPath,
		    f == TORCHEXT_KERNEL     ? ".cu candidate"
		    : f == TORCHEXT_MODELNEW ? "ModelNew with CUDA kernels"
		                             : "PyTorch extension with CUDA kernels",
		    zBackend, backend_cuda_available() ? "" : " (no GPU here)");
	if (lang != LANG_CUDA && cuda && f != TORCHEXT_MODELNEW)
		return kl_err(
		    err,
		    f == TORCHEXT_KERNEL
		        ? "%s: the cuda backend runs .cu candidates; use --backend host for "
		          "C/C++"
		        : "%s: a PyTorch extension without CUDA kernels runs on the host "
		          "backend (--backend host)",
		    zPath);
	return 0;
}

char *torchext_compile_name(const char *zName, int lang)
{
	const char *base = strrchr(zName, '/') ? strrchr(zName, '/') + 1 : zName;
	const char *dot = strrchr(base, '.');
	size_t k = dot ? (size_t)(dot - base) : strlen(base);
	if (compile_lang_from_name(base) == lang)
		return xstrdup(base);
	return xasprintf("%.*s.%s", (int)k, base, lang == LANG_CUDA ? "cu" : "cpp");
}

void torchext_entry_of(const char *z, size_t n, char *zOut, size_t nOut)
{
	zOut[0] = 0;
	static const char *const verbs[] = {"def(", "impl("};
	for (size_t i = 0; i < n; i++) {
		for (int v = 0; v < 2; v++) {
			size_t m = strlen(verbs[v]);
			if (i < 1 || z[i - 1] != '.' || n - i <= m || memcmp(z + i, verbs[v], m))
				continue;
			size_t k = i + m;
			while (k < n && isspace((unsigned char)z[k]))
				k++;
			if (k >= n || z[k] != '"')
				continue;
			size_t a = ++k;
			while (k < n && z[k] != '"' && z[k] != '(' && z[k] != '\n')
				k++;
			/* a schema's "ns::name(...)": its name */
			const char *sep = memmem(z + a, k - a, "::", 2);
			if (sep)
				a = (size_t)(sep - z) + 2;
			char name[64];
			snprintf(name, sizeof name, "%.*s", (int)(k - a), z + a);
			if (!zOut[0] || !strcmp(name, "forward"))
				snprintf(zOut, nOut, "%s", name);
		}
	}
	char entry[256];
	if (!zOut[0] && torchext_bare_entry(z, n, entry, sizeof entry) > 0)
		snprintf(zOut, nOut, "%s", entry);
}

int torchext_bare_entry(const char *z, size_t n, char *zOut, size_t nOut)
{
	int k = torchext_bare_entries(z, n, zOut, nOut);
	return k == 0 ? 0 : k == 1 || !strcmp(zOut, "forward") ? 1 : -1;
}

/* z[0..n) with its comments and the contents of its string and character
 * literals blanked (offsets kept): a fresh string */
static char *code_only(const char *z, size_t n)
{
	char *o = xstrndup(z, n);
	for (size_t i = 0; i < n; i++) {
		if (o[i] == '/' && i + 1 < n && o[i + 1] == '/') {
			while (i < n && o[i] != '\n')
				o[i++] = ' ';
		} else if (o[i] == '/' && i + 1 < n && o[i + 1] == '*') {
			o[i] = o[i + 1] = ' ';
			for (i += 2; i < n && !(o[i] == '*' && i + 1 < n && o[i + 1] == '/'); i++)
				o[i] = o[i] == '\n' ? '\n' : ' ';
			if (i < n)
				o[i] = ' ', o[i + 1] = ' ', i++;
		} else if (o[i] == '"' || o[i] == '\'') {
			char q = o[i];
			for (i++; i < n && o[i] != q && o[i] != '\n'; i++) {
				if (o[i] == '\\' && i + 1 < n)
					o[i++] = ' ';
				o[i] = ' ';
			}
		}
	}
	return o;
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* 1 when z[0..n) is one word that names a scalar type (an unnamed
 * parameter of a declaration: `int`) */
static int scalar_type(const char *z, size_t n)
{
	static const char *const types[] = {"int",     "float",   "double",  "bool",    "long",
	                                    "int64_t", "int32_t", "int16_t", "int8_t",  "uint8_t",
	                                    "size_t",  "short",   "char",    "unsigned"};
	while (n && isspace((unsigned char)*z))
		z++, n--;
	while (n && isspace((unsigned char)z[n - 1]))
		n--;
	for (size_t i = 0; i < sizeof types / sizeof *types; i++)
		if (strlen(types[i]) == n && !memcmp(z, types[i], n))
			return 1;
	return 0;
}

/* the kinds of parameter list z[a..b) (between its parentheses) into
 * zOut: 't' a tensor, 'n' anything else; -1 when it is not a list of
 * declarations (a call: a parameter of one word) */
static int param_kinds(const char *z, size_t a, size_t b, char *zOut, size_t nOut)
{
	size_t k = 0;
	int depth = 0;
	size_t start = a;
	int words = 0, inWord = 0, any = 0;
	for (size_t i = a; i <= b; i++) {
		char c = i < b ? z[i] : ',';
		if (c == '(' || c == '<' || c == '[')
			depth++;
		else if ((c == ')' || c == '>' || c == ']') && depth > 0)
			depth--;
		if (c == ',' && depth == 0) {
			if (i == b && !any && k == 0)
				break; /* () */
			const char *tensor = memmem(z + start, i - start, "Tensor", 6);
			int isVoid = words == 1 && memmem(z + start, i - start, "void", 4);
			if (isVoid && k == 0 && i == b)
				break; /* (void) */
			if (words < 2 && !tensor && !scalar_type(z + start, i - start))
				return -1; /* `x` alone: a call, not a declaration */
			if (k + 1 < nOut)
				zOut[k++] = tensor ? 't' : 'n';
			start = i + 1, words = 0, inWord = 0, any = 0;
			continue;
		}
		int w = ident_char(c) && depth == 0;
		if (w && !inWord)
			words++;
		inWord = w;
		any |= !isspace((unsigned char)c);
	}
	zOut[k] = 0;
	return 0;
}

/* the C++ function that def("NAME", &fn) or impl("NAME", fn) binds NAME to
 * in code c[0..n) (comments and literals blanked: its original z says the
 * names), into zOut; NAME itself where none does */
static void bound_fn(const char *z, const char *c, size_t n, const char *zName, char *zOut,
                     size_t nOut)
{
	snprintf(zOut, nOut, "%s", zName);
	size_t m = strlen(zName);
	for (size_t i = 0; i + m + 2 < n; i++) {
		if (z[i] != '"' || memcmp(z + i + 1, zName, m) ||
		    (z[i + 1 + m] != '"' && z[i + 1 + m] != '('))
			continue;
		size_t k = i + 1;
		while (k < n && z[k] != '"')
			k++; /* a schema's "ns::g(Tensor x) -> Tensor" too */
		k++;
		while (k < n && isspace((unsigned char)c[k]))
			k++;
		if (k >= n || c[k] != ',')
			continue;
		k++;
		while (k < n && (isspace((unsigned char)c[k]) || c[k] == '&' || c[k] == '('))
			k++;
		if (k + 9 < n && !memcmp(c + k, "TORCH_FN", 8))
			for (k += 8; k < n && (isspace((unsigned char)c[k]) || c[k] == '(');)
				k++;
		size_t a = k;
		while (k < n && (ident_char(c[k]) || c[k] == ':'))
			k++;
		const char *last = a < k ? memrchr(c + a, ':', k - a) : NULL;
		if (last)
			a = (size_t)(last - c) + 1;
		if (k > a && k - a < nOut) {
			snprintf(zOut, nOut, "%.*s", (int)(k - a), c + a);
			return;
		}
	}
}

int torchext_entry_params(const char *z, size_t n, const char *zName, char *zOut, size_t nOut)
{
	int rc = -1;
	if (!*zName || nOut < 2)
		return -1;
	char *c = code_only(z, n);
	char zEntry[128];
	bound_fn(z, c, n, zName, zEntry, sizeof zEntry);
	size_t m = strlen(zEntry);
	for (size_t i = 0; i + m < n; i++) {
		if (memcmp(c + i, zEntry, m) || (i > 0 && ident_char(c[i - 1])) ||
		    ident_char(c[i + m]))
			continue;
		/* a member's or a call through a pointer: not its declaration */
		size_t p = i;
		while (p > 0 && isspace((unsigned char)c[p - 1]))
			p--;
		if (p > 0 && (c[p - 1] == '.' || (c[p - 1] == '>' && p > 1 && c[p - 2] == '-') ||
		              (c[p - 1] == ':' && p > 1 && c[p - 2] == ':')))
			continue;
		size_t k = i + m;
		while (k < n && isspace((unsigned char)c[k]))
			k++;
		if (k >= n || c[k] != '(')
			continue;
		size_t a = k + 1;
		int depth = 1;
		for (k = a; k < n && depth; k++)
			depth += c[k] == '(' ? 1 : c[k] == ')' ? -1 : 0;
		if (depth)
			break;
		size_t b = k - 1; /* at its ')' */
		while (k < n && (isspace((unsigned char)c[k]) || ident_char(c[k])))
			k++; /* const, noexcept */
		if (k >= n || (c[k] != '{' && c[k] != ';'))
			continue;
		char kinds[64];
		if (param_kinds(c, a, b, kinds, sizeof kinds) < 0)
			continue;
		snprintf(zOut, nOut, "%s", kinds);
		rc = 0;
		if (c[k] == '{')
			break; /* its definition: the last word */
	}
	free(c);
	return rc;
}

/* ---- what the stand-in lacks ---- */

/* the text between the first q at or after p and the next q, into buf */
static int quoted(const char *p, char q, char *buf, size_t n)
{
	const char *a = strchr(p, q);
	const char *b = a ? strchr(a + 1, q) : NULL;
	if (!b || (size_t)(b - a - 1) >= n)
		return 0;
	snprintf(buf, n, "%.*s", (int)(b - a - 1), a + 1);
	return 1;
}

/* the text between the last q before p and p, into buf */
static int back_quoted(const char *line, const char *p, char q, char *buf, size_t n)
{
	const char *a = p;
	while (a > line && a[-1] != q)
		a--;
	if (a == line || (size_t)(p - a) >= n)
		return 0;
	snprintf(buf, n, "%.*s", (int)(p - a), a);
	return 1;
}

/* 1 when a namespace or class the compiler names is one of PyTorch's */
static int torch_scope(const char *z)
{
	static const char *const scopes[] = {"torch", "at", "c10", "pybind11", "py"};
	for (size_t i = 0; i < sizeof scopes / sizeof *scopes; i++) {
		size_t k = strlen(scopes[i]);
		if (!strncmp(z, scopes[i], k) && (!z[k] || z[k] == ':'))
			return 1;
	}
	return 0;
}

/* 1 when a header the compiler could not find is one of PyTorch's */
static int torch_header(const char *z)
{
	return !strncmp(z, "torch/", 6) || !strncmp(z, "ATen/", 5) || !strncmp(z, "c10/", 4) ||
	       !strncmp(z, "pybind11/", 9) || !strncmp(z, "THC/", 4);
}

/* 1 when a macro the compiler does not know is one of PyTorch's */
static int torch_macro(const char *z)
{
	return !strncmp(z, "AT_", 3) || !strncmp(z, "TORCH_", 6) || !strncmp(z, "C10_", 4) ||
	       !strncmp(z, "THC", 3);
}

/* "scope::name" into buf (the scope without "class "/"struct "); 1, or 0
 * when the scope is not PyTorch's */
static int scoped(const char *scope, const char *name, char *buf, size_t n)
{
	if (!strncmp(scope, "class ", 6))
		scope += 6;
	else if (!strncmp(scope, "struct ", 7))
		scope += 7;
	if (!torch_scope(scope))
		return 0;
	snprintf(buf, n, "%s::%s", scope, name);
	return 1;
}

/* a name the log line (its quotes made ASCII) says is missing from a
 * PyTorch namespace or class, a PyTorch macro or header, into buf: 1 or 0 */
static int missing_name(const char *line, char *buf, size_t n)
{
	char name[128], scope[128];
	const char *p;
	/* gcc */
	if ((p = strstr(line, "' is not a member of ")) &&
	    back_quoted(line, p, '\'', name, sizeof name) &&
	    quoted(p + 1, '\'', scope, sizeof scope))
		return scoped(scope, name, buf, n);
	if ((p = strstr(line, "' has no member named ")) &&
	    back_quoted(line, p, '\'', scope, sizeof scope) &&
	    quoted(p + 1, '\'', name, sizeof name))
		return scoped(scope, name, buf, n);
	/* clang */
	if ((p = strstr(line, "no member named '")) && quoted(p, '\'', name, sizeof name)) {
		const char *in = strstr(p + 17 + strlen(name), " in ");
		return in && quoted(in, '\'', scope, sizeof scope) && scoped(scope, name, buf, n);
	}
	/* nvcc: namespace "S" has no member "X", class "S" has no member "X" */
	if ((p = strstr(line, "\" has no member ")) &&
	    back_quoted(line, p, '"', scope, sizeof scope) && quoted(p + 1, '"', name, sizeof name))
		return scoped(scope, name, buf, n);
	/* a macro: gcc's "'X' was not declared", nvcc's identifier "X" is undefined */
	if ((((p = strstr(line, "' was not declared in this scope")) &&
	      back_quoted(line, p, '\'', name, sizeof name)) ||
	     ((p = strstr(line, "\" is undefined")) &&
	      back_quoted(line, p, '"', name, sizeof name)) ||
	     ((p = strstr(line, "use of undeclared identifier '")) &&
	      quoted(p, '\'', name, sizeof name))) &&
	    torch_macro(name)) {
		snprintf(buf, n, "%s", name);
		return 1;
	}
	/* a header: gcc's "fatal error: X: No such file", nvcc's cannot open
	 * source file "X" */
	if ((p = strstr(line, ": No such file or directory")) && strstr(line, "fatal error: ")) {
		const char *a = strstr(line, "fatal error: ") + 13;
		if (p > a && (size_t)(p - a) < sizeof name) {
			snprintf(name, sizeof name, "%.*s", (int)(p - a), a);
			if (torch_header(name)) {
				snprintf(buf, n, "<%s>", name);
				return 1;
			}
		}
	}
	if ((p = strstr(line, "cannot open source file \"")) && quoted(p, '"', name, sizeof name) &&
	    torch_header(name)) {
		snprintf(buf, n, "<%s>", name);
		return 1;
	}
	return 0;
}

/* line with gcc's typographic quotes (U+2018, U+2019) made ASCII, in place */
static void ascii_quotes(char *line)
{
	char *w = line;
	for (const char *r = line; *r;) {
		if ((unsigned char)r[0] == 0xe2 && (unsigned char)r[1] == 0x80 &&
		    ((unsigned char)r[2] == 0x98 || (unsigned char)r[2] == 0x99)) {
			*w++ = '\'';
			r += 3;
		} else {
			*w++ = *r++;
		}
	}
	*w = 0;
}

int torchext_missing(const char *zLog, char *zOut, size_t nOut)
{
	char names[4][160];
	int nNames = 0, more = 0;
	for (const char *p = zLog ? zLog : ""; *p;) {
		size_t k = strcspn(p, "\n");
		char *line = xstrndup(p, k);
		p += k + (p[k] == '\n');
		ascii_quotes(line);
		char name[160];
		if (missing_name(line, name, sizeof name)) {
			int seen = 0;
			for (int i = 0; i < nNames; i++)
				seen |= !strcmp(names[i], name);
			if (!seen && nNames < 4)
				snprintf(names[nNames++], sizeof names[0], "%s", name);
			else if (!seen)
				more++;
		}
		free(line);
	}
	if (!nNames)
		return 0;
	strbuf sb = STRBUF_INIT;
	for (int i = 0; i < nNames; i++)
		sb_addf(&sb, "%s%s", i ? (i == nNames - 1 && !more ? " and " : ", ") : "",
		        names[i]);
	if (more)
		sb_addf(&sb, " and %d more", more);
	snprintf(zOut, nOut, "%s", sb.buf);
	sb_free(&sb);
	return nNames + more;
}

int torchext_diagnose(const char *zName, const char *zLog, char *zOut, size_t nOut)
{
	char names[800];
	int n = torchext_missing(zLog, names, sizeof names);
	if (!n)
		return 0;
	snprintf(zOut, nOut,
	         "%s uses %s, which kloop's ATen stand-in (include/kloop_torch.h) does not "
	         "provide: it has tensors over kloop's buffers (sizes, dtype, data_ptr, "
	         "view/reshape), torch::empty/zeros/ones and *_like, AT_DISPATCH_*, TORCH_CHECK "
	         "and the current CUDA stream, not PyTorch's operators; compute %s in the "
	         "extension's own code",
	         zName, names, n > 1 ? "them" : "it");
	return 1;
}

/* ---- the verdict's note ---- */

cJSON *torchext_note_json(const struct torchext_note *n, char *const *azOut, int nOut)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "form", torchext_form_name(n->form));
	cJSON_AddStringToObject(o, "via", n->zPytorch[0] ? "pytorch" : "stand-in");
	if (n->zPytorch[0])
		cJSON_AddStringToObject(o, "pytorch", n->zPytorch);
	if (n->zLacks[0])
		cJSON_AddStringToObject(o, "stand_in_lacks", n->zLacks);
	cJSON_AddStringToObject(o, "language", n->cuda ? "cuda" : "c++");
	if (n->zEntry[0])
		cJSON_AddStringToObject(o, "entry", n->zEntry);
	if (n->copied) {
		cJSON *a = cJSON_AddArrayToObject(o, "copied");
		for (int k = 0; k < nOut && k < 32; k++)
			if (n->copied >> k & 1)
				cJSON_AddItemToArray(a, cJSON_CreateString(azOut[k]));
	}
	if (n->zNotes[0])
		cJSON_AddStringToObject(o, "notes", n->zNotes);
	return o;
}

int torchext_note_line(const cJSON *o, char *zOut, size_t nOut)
{
	enum torchext_form f;
	const char *zForm = cJSON_GetStringValue(cJSON_GetObjectItem(o, "form"));
	if (!cJSON_IsObject(o) || torchext_form_parse(zForm, &f) < 0 || f == TORCHEXT_KERNEL)
		return -1;
	const char *lang = cJSON_GetStringValue(cJSON_GetObjectItem(o, "language"));
	const char *entry = cJSON_GetStringValue(cJSON_GetObjectItem(o, "entry"));
	const char *notes = cJSON_GetStringValue(cJSON_GetObjectItem(o, "notes"));
	const cJSON *copied = cJSON_GetObjectItem(o, "copied");
	strbuf sb = STRBUF_INIT;
	const char *zLang = lang && !strcmp(lang, "cuda") ? "CUDA" : "C++";
	if (f == TORCHEXT_MODELNEW)
		sb_addf(&sb, "a KernelBench ModelNew (its load_inline sources as %s)", zLang);
	else
		sb_addf(&sb, "a PyTorch extension (%s)", zLang);
	if (entry)
		sb_addf(&sb, ", %s %s", f == TORCHEXT_MODELNEW ? "forward calls" : "entry point",
		        entry);
	const char *pt = cJSON_GetStringValue(cJSON_GetObjectItem(o, "pytorch"));
	const char *lacks = cJSON_GetStringValue(cJSON_GetObjectItem(o, "stand_in_lacks"));
	if (pt && lacks)
		sb_addf(&sb, ", built against %s (it uses %s, which kloop's ATen stand-in lacks)",
		        pt, lacks);
	else if (pt)
		sb_addf(&sb, ", built against %s", pt);
	else
		sb_adds(&sb, ", on kloop's ATen stand-in");
	int nc = cJSON_GetArraySize(copied), k = 0;
	const cJSON *e;
	cJSON_ArrayForEach(e, copied)
	{
		const char *z = cJSON_GetStringValue(e);
		sb_addf(&sb, "%s%s",
		        k == 0        ? "; output "
		        : k == nc - 1 ? " and "
		                      : ", ",
		        z ? z : "?");
		k++;
	}
	if (nc && pt)
		sb_addf(&sb,
		        " copied from the tensor%s it returned (the copy is in its time: PyTorch "
		        "allocates what it returns, which kloop cannot point at its output)",
		        nc > 1 ? "s" : "");
	else if (nc)
		sb_addf(&sb,
		        " copied from the tensor%s it returned (the copy is in its time: allocate "
		        "%s with torch::empty_like or torch::empty of %s shape and dtype to write "
		        "kloop's buffer in place)",
		        nc > 1 ? "s" : "", nc > 1 ? "them" : "it", nc > 1 ? "their" : "its");
	if (notes)
		sb_addf(&sb, "; %s", notes);
	snprintf(zOut, nOut, "%s", sb.buf);
	sb_free(&sb);
	return 0;
}
