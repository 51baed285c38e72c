/*
 * kloop_torch/kl_torch_run.h - an extension's entry points and kl_run:
 * PYBIND11_MODULE / TORCH_LIBRARY record each function a module names (a
 * function pointer and a template that calls it), the entry point's
 * arguments are built from kloop's tensors by its parameter types, what it
 * returns is mapped onto the task's outputs (copied where it is not kloop's
 * own buffer).  Included by kloop_torch.h (the stand-in, which says the
 * rules) and by kloop_torch_real.h (PyTorch's own headers), each of which
 * first gives kl_torch:: the call, text, failf, wrap, kl_of, kl_name,
 * shape_str, opt_tensor (the optional tensor type of its c10), copy_result
 * (a result into kloop's output k), release (the call's allocations given
 * back) and call_scope (what holds for the call: the current stream).
 */
#ifndef KLOOP_TORCH_RUN_H
#define KLOOP_TORCH_RUN_H

namespace kl_torch
{

/* an argument a ModelNew's forward passes (kloop writes its plan) */
enum { ARG_INPUT = 1, ARG_INT, ARG_FLOAT, ARG_BOOL };
struct plan_arg {
	int kind;    /* ARG_* */
	long long i; /* the input's index, or the integer or bool */
	double f;    /* the float */
};
/* the call a ModelNew's forward makes: entry(args...) */
struct plan {
	const char *entry;
	const plan_arg *args;
	int n;
};
static inline const plan *&the_plan()
{
	static const plan *p;
	return p;
}
struct plan_registrar {
	plan p;
	plan_registrar(const char *entry, const plan_arg *args, int n) : p{entry, args, n}
	{
		the_plan() = &p;
	}
};

/* what a KernelBench problem's get_init_inputs() gives Model's constructor
 * (kloop appends it to an extension for a problem that has some):
 * without a plan, the entry point's scalar parameters take these in order */
struct init_value {
	int kind; /* ARG_INT, ARG_FLOAT, ARG_BOOL; 0: not a number */
	long long i;
	double f;
	const char *name; /* __init__'s parameter */
	const char *type; /* its Python type's name */
};
struct init_list {
	const init_value *v;
	int n;
};
static inline init_list &the_init()
{
	static init_list l;
	return l;
}
struct init_registrar {
	init_registrar(const init_value *v, int n)
	{
		the_init() = init_list{v, n};
	}
};

template <class T>
struct is_tensor_param : std::bool_constant<std::is_same_v<T, at::Tensor> ||
                                            std::is_same_v<T, std::optional<at::Tensor>> ||
                                            std::is_same_v<T, opt_tensor>> {
};
template <class T>
struct param_ok : std::bool_constant<is_tensor_param<T>::value || std::is_arithmetic_v<T>> {
};

template <class T> const char *type_name()
{
	if constexpr (std::is_same_v<T, bool>)
		return "bool";
	else if constexpr (std::is_floating_point_v<T>)
		return sizeof(T) == 4 ? "float" : "double";
	else
		return sizeof(T) == 8 ? "int64_t" : "int";
}

/* an entry point's results, at most one per output kloop can have */
struct result_list {
	at::Tensor t[32];
	int n;
	int over; /* results past those */
	void add(const at::Tensor &x)
	{
		if (n < 32)
			t[n++] = x;
		else
			over++;
	}
};

/* hands out the entry point's arguments, in order */
struct args {
	call &c;
	const plan *p;
	const char *entry;
	int nTensor;       /* tensor parameters handed out so far (no plan) */
	int nNumber;       /* scalar parameters handed out so far (no plan) */
	uint32_t givenOut; /* outputs given as parameters */

	KL_TORCH_NOINLINE void check_count(int n) const
	{
		if (p && n != p->n)
			failf("forward calls %s with %d argument(s); %s takes %d", entry, p->n,
			      entry, n);
	}
	KL_TORCH_NOINLINE at::Tensor tensor(int j)
	{
		if (p) {
			const plan_arg &a = p->args[j];
			if (a.kind != ARG_INPUT)
				failf("argument %d of %s is a tensor; forward passes it a number",
				      j + 1, entry);
			if (a.i < 0 || a.i >= c.nIn)
				failf("forward passes %s input %lld; the task has %d", entry, a.i,
				      c.nIn);
			return wrap(c.in[a.i], c.cuda);
		}
		int k = nTensor++;
		if (k < c.nIn)
			return wrap(c.in[k], c.cuda);
		if (k < c.nIn + c.nOut) {
			givenOut |= 1u << (k - c.nIn);
			c.claimed |= 1u << (k - c.nIn);
			return wrap(c.out[k - c.nIn], c.cuda);
		}
		failf("%s takes more tensors than the task's %d input(s) and %d output(s): its "
		      "tensor parameters take the inputs in order, then the outputs",
		      entry, c.nIn, c.nOut);
	}
	/* without a plan, the number for scalar parameter j of type zType: the
	 * next of get_init_inputs() */
	KL_TORCH_NOINLINE plan_arg init_number(int j, const char *zType)
	{
		const init_list &il = the_init();
		const char *an = zType[0] == 'i' ? "n" : "";
		int k = nNumber++;
		if (k >= il.n) {
			text names;
			for (int i = 0; i < il.n; i++) {
				names.add(i ? ", " : "");
				names.add(il.v[i].name);
			}
			if (il.n)
				failf(
				    "parameter %d of %s is a%s %s: kloop gives an extension's "
				    "entry "
				    "point the task's tensors (inputs, then outputs) and, to its "
				    "number parameters in order, what the problem's "
				    "get_init_inputs() gives (%s); %s takes more numbers than that",
				    j + 1, entry, an, zType, names.c_str(), entry);
			failf("parameter %d of %s is a%s %s: kloop gives an extension's entry "
			      "point the task's tensors only (inputs, then outputs), and numbers "
			      "from the problem's get_init_inputs(), which this task has none of; "
			      "a number reaches it from a ModelNew's forward call (mod.%s(x, 0.5)) "
			      "or as a constant in the code",
			      j + 1, entry, an, zType, entry);
		}
		const init_value &v = il.v[k];
		if (!v.kind)
			failf(
			    "parameter %d of %s is a%s %s, which takes get_init_inputs()'s "
			    "value %d (%s); that is a %s: kloop passes numbers (int, float, bool) "
			    "from get_init_inputs(), no other values",
			    j + 1, entry, an, zType, k + 1, v.name, v.type);
		return plan_arg{v.kind, v.i, v.f};
	}
	/* a float given to parameter j, of integer type zType */
	[[noreturn]] KL_TORCH_COLD void not_float(int j, const char *zType, double f)
	{
		char v[40];
		if (f == (double)(long long)f)
			snprintf(v, sizeof v, "%.1f", f);
		else
			snprintf(v, sizeof v, "%g", f);
		failf("parameter %d of %s is a%s %s; it is given %s, a float (PyTorch's bindings "
		      "refuse that too)",
		      j + 1, entry, zType[0] == 'i' ? "n" : "", zType, v);
	}
	/* a number for parameter j of type zType: the plan's, else the next of
	 * get_init_inputs() */
	KL_TORCH_NOINLINE plan_arg number(int j, const char *zType)
	{
		if (!p)
			return init_number(j, zType);
		if (p->args[j].kind == ARG_INPUT)
			failf("parameter %d of %s is a%s %s; forward passes it a tensor", j + 1,
			      entry, zType[0] == 'i' ? "n" : "", zType);
		return p->args[j];
	}
	template <class T> T get(int j)
	{
		if constexpr (is_tensor_param<T>::value) {
			return T(tensor(j));
		} else {
			plan_arg a = number(j, type_name<T>());
			if (a.kind == ARG_FLOAT && !std::is_floating_point_v<T>)
				not_float(j, type_name<T>(), a.f);
			return a.kind == ARG_FLOAT ? (T)a.f : (T)a.i;
		}
	}
};

/* what an entry point returns, as a list of tensors */
template <class R> struct results {
	static_assert(sizeof(R) == 0,
	              "kloop's ATen stand-in maps an entry point's result of torch::Tensor, "
	              "std::vector<torch::Tensor> or std::tuple of tensors (or void) onto the "
	              "task's outputs; this entry point returns another type");
};
template <> struct results<at::Tensor> {
	static void put(const at::Tensor &t, result_list &v)
	{
		v.add(t);
	}
};
template <> struct results<std::vector<at::Tensor>> {
	static void put(const std::vector<at::Tensor> &t, result_list &v)
	{
		for (const at::Tensor &x : t)
			v.add(x);
	}
};
template <class... T> struct results<std::tuple<T...>> {
	static_assert(
	    (std::is_same_v<std::decay_t<T>, at::Tensor> && ...),
	    "kloop's ATen stand-in: a std::tuple an entry point returns holds tensors only");
	static void put(const std::tuple<T...> &t, result_list &v)
	{
		std::apply([&](const auto &...x) { (v.add(x), ...); }, t);
	}
};
template <class A, class B> struct results<std::pair<A, B>> {
	static void put(const std::pair<A, B> &t, result_list &v)
	{
		v.add(t.first);
		v.add(t.second);
	}
};

using fnptr = void (*)();
using invoke_fn = void (*)(fnptr, call &, const plan *, const char *, result_list &, uint32_t *);

template <class R, class... A> struct invoker {
	static_assert((param_ok<std::decay_t<A>>::value && ...),
	              "kloop's ATen stand-in maps an entry point's parameters of types "
	              "torch::Tensor (by value or reference), c10::optional<torch::Tensor>, "
	              "integers, floating types and bool; this entry point has another");
	template <size_t... I>
	static void call_(R (*fn)(A...), args &src, result_list &res, std::index_sequence<I...>)
	{
		/* a braced list: the arguments are made in order */
		std::tuple<std::decay_t<A>...> a{src.template get<std::decay_t<A>>((int)I)...};
		if constexpr (std::is_void_v<R>)
			std::apply(fn, a);
		else
			results<std::decay_t<R>>::put(std::apply(fn, a), res);
	}
	static void run(fnptr f, call &c, const plan *p, const char *name, result_list &res,
	                uint32_t *pGiven)
	{
		args src{c, p, name, 0, 0, 0};
		src.check_count((int)sizeof...(A));
		call_(reinterpret_cast<R (*)(A...)>(f), src, res, std::index_sequence_for<A...>{});
		*pGiven = src.givenOut;
	}
};

/* a function a module names */
struct entry {
	char name[64];
	fnptr fn;
	invoke_fn invoke;
};
struct entry_list {
	entry e[32];
	int n;
};
static inline entry_list &entries()
{
	static entry_list v;
	return v;
}
/* name: a function's, or a schema's "ns::name(Tensor x) -> Tensor" */
KL_TORCH_NOINLINE inline void add_entry_(const char *name, fnptr f, invoke_fn inv)
{
	entry_list &v = entries();
	if (v.n == 32)
		return;
	entry &e = v.e[v.n++];
	const char *sep = strstr(name, "::"), *paren = strchr(name, '(');
	if (sep && (!paren || sep < paren))
		name = sep + 2;
	size_t n = 0;
	while (name[n] && name[n] != '(' && name[n] != ' ' && n + 1 < sizeof e.name)
		n++;
	memcpy(e.name, name, n);
	e.name[n] = 0;
	e.fn = f;
	e.invoke = inv;
}
template <class R, class... A> void add_entry(const char *name, R (*f)(A...))
{
	add_entry_(name, reinterpret_cast<fnptr>(f), &invoker<R, A...>::run);
}
/* a module's body, run when the object is loaded */
struct registrar {
	explicit registrar(void (*init)())
	{
		init();
	}
};

/* the function kl_run calls: the plan's, else "forward", else the first */
KL_TORCH_NOINLINE inline const entry &pick()
{
	const entry_list &v = entries();
	const plan *p = the_plan();
	text names;
	for (int i = 0; i < v.n; i++) {
		if (p && !strcmp(v.e[i].name, p->entry))
			return v.e[i];
		if (i)
			names.add(", ");
		names.add(v.e[i].name);
	}
	if (!v.n)
		failf("the extension names no function: kloop calls the one its PYBIND11_MODULE's "
		      "m.def (or TORCH_LIBRARY's def/impl) names \"forward\", else the first");
	if (p)
		failf("forward calls %s, which the module does not define (it defines %s)",
		      p->entry, names.c_str());
	for (int i = 0; i < v.n; i++)
		if (!strcmp(v.e[i].name, "forward"))
			return v.e[i];
	return v.e[0];
}

/* the entry point's results onto kloop's outputs: kloop's own buffers left
 * as they are, any other tensor copied into them; the copied ones' bits */
KL_TORCH_NOINLINE inline uint32_t deliver(call &c, const result_list &res, const char *name,
                                          uint32_t given)
{
	char b1[120], b2[120];
	if (!res.n) {
		for (int k = 0; k < c.nOut; k++)
			if (!(given >> k & 1))
				failf("%s returned nothing and was not given output %d to write: "
				      "return "
				      "the output tensors, or take them as parameters after the "
				      "inputs",
				      name, k);
		return 0;
	}
	if (res.n + res.over != c.nOut)
		failf("%s returned %d tensor(s); the task has %d output(s)", name, res.n + res.over,
		      c.nOut);
	uint32_t copied = 0;
	for (int k = 0; k < c.nOut; k++) {
		const at::Tensor &t = res.t[k];
		const kl_tensor &o = c.out[k];
		c10::IntArrayRef want(o.shape, (size_t)o.ndim);
		if (!t.defined())
			failf("%s returned an undefined tensor for output %d", name, k);
		if (kl_of(t.scalar_type()) != (int)o.dtype)
			failf("%s returned a %s tensor for output %d, which is %s", name,
			      c10::toString(t.scalar_type()), k, kl_name(o.dtype));
		if (t.sizes() != want)
			failf("%s returned a tensor of shape %s for output %d, which is %s", name,
			      shape_str(t.sizes().data(), t.sizes().size(), b1, sizeof b1), k,
			      shape_str(o.shape, (size_t)o.ndim, b2, sizeof b2));
		if (t.is_cuda() != c.cuda)
			failf(
			    "%s returned a %s tensor for output %d; kloop's outputs are on the %s",
			    name, t.is_cuda() ? "CUDA" : "CPU", k, c.cuda ? "GPU" : "CPU");
		if (t.data_ptr() == o.data)
			continue;
		copied |= 1u << k;
		copy_result(c, k, t);
	}
	return copied;
}

/* kl_run's body: the entry point called, its results delivered, the arena
 * freed; 0, or 1 with its words in zErr (nErr bytes) */
KL_TORCH_NOINLINE static inline int run(const kl_tensor *in, int nIn, kl_tensor *out, int nOut,
                                        void *stream, char *zErr, size_t nErr, uint32_t *pCopied)
{
	static call c;
	c.in = in, c.nIn = nIn, c.out = out, c.nOut = nOut, c.stream = stream;
	c.cuda = false, c.claimed = 0, c.nArena = 0;
#ifdef KL_TORCH_HAS_CUDA
	c.cuda = stream != nullptr;
#endif
	static text msg;
	msg = text();
	zErr[0] = 0;
	*pCopied = 0;
	current() = &c;
	int rc = 0;
	try {
		call_scope scope(c);
		const entry &e = pick();
		static result_list res;
		res.n = res.over = 0;
		uint32_t given = 0;
		e.invoke(e.fn, c, the_plan(), e.name, res, &given);
		*pCopied = deliver(c, res, e.name, given);
		for (int k = 0; k < res.n; k++)
			res.t[k] = at::Tensor();
	} catch (const failure &f) {
		rc = 1, msg = f.what;
#ifdef KL_TORCH_REAL
	} catch (const c10::Error &x) { /* TORCH_CHECK's, without the C++ backtrace */
		rc = 1, msg = cat(x.what_without_backtrace());
#endif
	} catch (const std::exception &x) {
		rc = 1, msg = cat("the extension threw ", x.what());
	} catch (...) {
		rc = 1, msg = cat("the extension threw an exception");
	}
	try {
		release(c);
	} catch (const failure &f) {
		if (!rc)
			rc = 1, msg = f.what;
	}
	current() = nullptr;
	snprintf(zErr, nErr, "%s", msg.c_str());
	return rc;
}

} // namespace kl_torch

/* ---- the bindings: PYBIND11_MODULE's m.def, TORCH_LIBRARY's def and impl ---- */
namespace pybind11
{
struct arg {
	const char *name;
	explicit arg(const char *n) : name(n)
	{
	}
	template <class T> arg &operator=(const T &)
	{
		return *this;
	}
};
template <class... T> struct call_guard {
};
struct gil_scoped_release {
};
struct kl_doc {
	kl_doc &operator=(const char *)
	{
		return *this;
	}
};
class module_
{
      public:
	template <class F, class... Extra> module_ &def(const char *name, F &&f, const Extra &...)
	{
		::kl_torch::add_entry(name, +f);
		return *this;
	}
	kl_doc doc()
	{
		return kl_doc();
	}
	module_ def_submodule(const char *, const char * = nullptr)
	{
		return module_();
	}
};
using module = module_;
} // namespace pybind11
namespace py = pybind11;

namespace kl_torch
{
/* TORCH_LIBRARY's m: def and impl record the function they name */
class library
{
      public:
	/* a schema alone: its impl names the function */
	library &def(const char *)
	{
		return *this;
	}
	template <class F> library &def(const char *schema, F &&f)
	{
		::kl_torch::add_entry(schema, +f);
		return *this;
	}
	template <class F> library &impl(const char *name, F &&f)
	{
		::kl_torch::add_entry(name, +f);
		return *this;
	}
};
} // namespace kl_torch
#ifndef KL_TORCH_REAL
namespace torch
{
using Library = ::kl_torch::library;
}
#endif
/* PyTorch's own, where its headers are the ones (kloop_torch_real.h) */
#undef TORCH_FN
#undef PYBIND11_MODULE
#undef TORCH_LIBRARY
#undef TORCH_LIBRARY_FRAGMENT
#undef TORCH_LIBRARY_IMPL
#define TORCH_FN(f) (&(f))

#ifndef TORCH_EXTENSION_NAME
#define TORCH_EXTENSION_NAME kloop_extension
#endif

/* a module's body, run as the object loads, with its variable named var */
#define KL_TORCH_MODULE(T, var)                                                                    \
	static void KL_TORCH_CAT(kl_torch_init_, __LINE__)(T &);                                   \
	static ::kl_torch::registrar KL_TORCH_CAT(kl_torch_reg_, __LINE__)([] {                    \
		T kl_torch_m_;                                                                     \
		KL_TORCH_CAT(kl_torch_init_, __LINE__)(kl_torch_m_);                               \
	});                                                                                        \
	static void KL_TORCH_CAT(kl_torch_init_, __LINE__)(T & var)
#define PYBIND11_MODULE(name, var, ...) KL_TORCH_MODULE(::pybind11::module_, var)
#define TORCH_LIBRARY(ns, m) KL_TORCH_MODULE(::kl_torch::library, m)
#define TORCH_LIBRARY_FRAGMENT(ns, m) KL_TORCH_MODULE(::kl_torch::library, m)
#define TORCH_LIBRARY_IMPL(ns, k, m) KL_TORCH_MODULE(::kl_torch::library, m)

#ifndef KL_TORCH_NO_RUN
extern "C" {
char kl_run_error[KL_RUN_ERROR_MAX];
uint32_t kl_run_copied;
int kl_run(const kl_tensor *in, int n_in, kl_tensor *out, int n_out, void *stream)
{
	return ::kl_torch::run(in, n_in, out, n_out, stream, kl_run_error, sizeof kl_run_error,
	                       &kl_run_copied);
}
}
#endif

#endif
