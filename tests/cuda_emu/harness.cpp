/*
 * harness.cpp - runs one CUDA seed (rewritten by emu_cu.py, linked in) on
 * the CPU through emu.h and checks its kl_run against a double reference:
 *   harness gemm_bf16|gemm_f16 M N K   harness rmsnorm ROWS COLS
 *   harness attention|attention_causal BATCH HEADS SEQ HD
 *   harness refuse_gemm_bf16 M N K     (kl_run must refuse: non-zero)
 *   harness gemm_fp8 M N K             harness refuse_gemm_fp8 M N K
 * Prints one "ok - ..." or "not ok - ..." line and exits 0 or 1.
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kloop.h"

static std::mt19937 rng(42);

static std::vector<uint16_t> draw(size_t n, bool bf16, float lo, float hi)
{
	std::uniform_real_distribution<float> u(lo, hi);
	std::vector<uint16_t> v(n);
	for (auto &e : v)
		e = bf16 ? kl_f32_to_bf16(u(rng)) : kl_f32_to_f16(u(rng));
	return v;
}

static kl_tensor tensor(void *p, kl_dtype t, std::vector<int64_t> shape)
{
	kl_tensor k{};
	k.data = p;
	k.dtype = t;
	k.ndim = (int)shape.size();
	for (size_t i = 0; i < shape.size(); i++)
		k.shape[i] = shape[i];
	return k;
}

static int judge(const char *what, const std::vector<uint16_t> &out, const std::vector<double> &ref,
                 bool bf16, double atol, double rtol, double rel_l2)
{
	double num = 0, den = 0, worst = 0;
	size_t bad = 0, at = 0;
	for (size_t i = 0; i < ref.size(); i++) {
		double o = bf16 ? kl_bf16_to_f32(out[i]) : kl_f16_to_f32(out[i]),
		       d = std::fabs(o - ref[i]);
		num += d * d;
		den += ref[i] * ref[i];
		if (!(d <= atol + rtol * std::fabs(ref[i]))) {
			if (!bad)
				at = i;
			bad++;
		}
		if (d > worst || std::isnan(d))
			worst = d;
	}
	double rl2 = std::sqrt(num / den);
	if (bad || !(rl2 <= rel_l2)) {
		double o = bf16 ? kl_bf16_to_f32(out[at]) : kl_f16_to_f32(out[at]);
		printf("not ok - %s: %zu of %zu elements mismatch (first at %zu: got %g, expected "
		       "%g), "
		       "relative L2 %.3g\n",
		       what, bad, ref.size(), at, o, ref[at], rl2);
		return 1;
	}
	printf("ok - %s: max abs error %.3g, relative L2 %.3g\n", what, worst, rl2);
	return 0;
}

static int gemm(const char *what, bool bf16, int64_t M, int64_t N, int64_t K, bool refuse)
{
	auto A = draw(M * K, bf16, -1, 1), B = draw(K * N, bf16, -1, 1);
	std::vector<uint16_t> C(M * N, 0x7fc1); /* NaN poison */
	kl_dtype t = bf16 ? KL_BF16 : KL_F16;
	kl_tensor in[2] = {tensor(A.data(), t, {M, K}), tensor(B.data(), t, {K, N})};
	kl_tensor out[1] = {tensor(C.data(), t, {M, N})};
	int rc = kl_run(in, 2, out, 1, nullptr);
	if (refuse) {
		printf("%s - %s: kl_run returned %d\n", rc ? "ok" : "not ok", what, rc);
		return rc == 0;
	}
	if (rc) {
		printf("not ok - %s: kl_run returned %d\n", what, rc);
		return 1;
	}
	auto f = [&](uint16_t h) { return (double)(bf16 ? kl_bf16_to_f32(h) : kl_f16_to_f32(h)); };
	std::vector<double> ref(M * N);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++)
				s += f(A[i * K + k]) * f(B[k * N + j]);
			ref[i * N + j] = s;
		}
	return judge(what, C, ref, bf16, 1e-2, 1e-2, 5e-3);
}

/* C = sa sb A B^T, e4m3 A[M,K] and B[N,K], bf16 C */
static int gemm_fp8(const char *what, int64_t M, int64_t N, int64_t K, bool refuse)
{
	std::uniform_real_distribution<float> u(-2, 2);
	std::vector<uint8_t> A(M * K), B(N * K);
	for (auto *t : {&A, &B})
		for (auto &e : *t)
			e = kl_f32_to_e4m3(u(rng));
	float sa = 0.75f, sb = 1.5f;
	std::vector<uint16_t> C(M * N, 0x7fc1); /* NaN poison */
	kl_tensor in[4] = {tensor(A.data(), KL_E4M3, {M, K}), tensor(B.data(), KL_E4M3, {N, K}),
	                   tensor(&sa, KL_F32, {1}), tensor(&sb, KL_F32, {1})};
	kl_tensor out[1] = {tensor(C.data(), KL_BF16, {M, N})};
	int rc = kl_run(in, 4, out, 1, nullptr);
	if (refuse) {
		printf("%s - %s: kl_run returned %d\n", rc ? "ok" : "not ok", what, rc);
		return rc == 0;
	}
	if (rc) {
		printf("not ok - %s: kl_run returned %d\n", what, rc);
		return 1;
	}
	std::vector<double> ref(M * N);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0;
			for (int64_t k = 0; k < K; k++)
				s += (double)kl_e4m3_to_f32(A[i * K + k]) * kl_e4m3_to_f32(B[j * K + k]);
			ref[i * N + j] = s * sa * sb;
		}
	return judge(what, C, ref, true, 1e-2, 1e-2, 5e-3);
}

static int rmsnorm(const char *what, int64_t R, int64_t Cn)
{
	std::normal_distribution<float> nd(0, 1);
	std::vector<uint16_t> x(R * Cn), y(R * Cn, 0x7fc1);
	for (auto &e : x)
		e = kl_f32_to_bf16(nd(rng));
	auto w = draw(Cn, true, 0.5f, 1.5f);
	kl_tensor in[2] = {tensor(x.data(), KL_BF16, {R, Cn}), tensor(w.data(), KL_BF16, {Cn})};
	kl_tensor out[1] = {tensor(y.data(), KL_BF16, {R, Cn})};
	int rc = kl_run(in, 2, out, 1, nullptr);
	if (rc) {
		printf("not ok - %s: kl_run returned %d\n", what, rc);
		return 1;
	}
	std::vector<double> ref(R * Cn);
	for (int64_t r = 0; r < R; r++) {
		double ss = 0;
		for (int64_t c = 0; c < Cn; c++)
			ss += std::pow(kl_bf16_to_f32(x[r * Cn + c]), 2);
		double inv = 1 / std::sqrt(ss / Cn + 1e-6);
		for (int64_t c = 0; c < Cn; c++)
			ref[r * Cn + c] =
			    kl_bf16_to_f32(x[r * Cn + c]) * inv * kl_bf16_to_f32(w[c]);
	}
	return judge(what, y, ref, true, 1e-2, 1e-2, 5e-3);
}

static int attention(const char *what, bool causal, int64_t B, int64_t H, int64_t S, int64_t D)
{
	std::normal_distribution<float> nd(0, 1);
	size_t n = B * H * S * D;
	std::vector<uint16_t> q(n), k(n), v(n), o(n, 0x7fc1);
	for (auto *t : {&q, &k, &v})
		for (auto &e : *t)
			e = kl_f32_to_bf16(nd(rng));
	kl_tensor in[3] = {tensor(q.data(), KL_BF16, {B, H, S, D}),
	                   tensor(k.data(), KL_BF16, {B, H, S, D}),
	                   tensor(v.data(), KL_BF16, {B, H, S, D})};
	kl_tensor out[1] = {tensor(o.data(), KL_BF16, {B, H, S, D})};
	int rc = kl_run(in, 3, out, 1, nullptr);
	if (rc) {
		printf("not ok - %s: kl_run returned %d\n", what, rc);
		return 1;
	}
	std::vector<double> ref(n), s(S);
	auto f = [](uint16_t h) { return (double)kl_bf16_to_f32(h); };
	for (int64_t bh = 0; bh < B * H; bh++)
		for (int64_t i = 0; i < S; i++) {
			int64_t m = causal ? i + 1 : S;
			double mx = -INFINITY, l = 0;
			for (int64_t j = 0; j < m; j++) {
				double d = 0;
				for (int64_t c = 0; c < D; c++)
					d +=
					    f(q[(bh * S + i) * D + c]) * f(k[(bh * S + j) * D + c]);
				s[j] = d / std::sqrt((double)D);
				mx = std::max(mx, s[j]);
			}
			for (int64_t j = 0; j < m; j++)
				l += s[j] = std::exp(s[j] - mx);
			for (int64_t c = 0; c < D; c++) {
				double acc = 0;
				for (int64_t j = 0; j < m; j++)
					acc += s[j] * f(v[(bh * S + j) * D + c]);
				ref[(bh * S + i) * D + c] = acc / l;
			}
		}
	return judge(what, o, ref, true, 2e-3, 1e-2, 1e-2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	std::string m = argv[1], what = m;
	std::vector<int64_t> a;
	for (int i = 2; i < argc; i++) {
		a.push_back(atoll(argv[i]));
		what += std::string(i == 2 ? " " : "x") + argv[i];
	}
	if (m == "gemm_bf16" || m == "gemm_f16" || m == "refuse_gemm_bf16")
		return gemm(what.c_str(), m != "gemm_f16", a[0], a[1], a[2],
		            m == "refuse_gemm_bf16");
	if (m == "gemm_fp8" || m == "refuse_gemm_fp8")
		return gemm_fp8(what.c_str(), a[0], a[1], a[2], m == "refuse_gemm_fp8");
	if (m == "rmsnorm")
		return rmsnorm(what.c_str(), a[0], a[1]);
	if (m == "attention" || m == "attention_causal")
		return attention(what.c_str(), m == "attention_causal", a[0], a[1], a[2], a[3]);
	return 2;
}
