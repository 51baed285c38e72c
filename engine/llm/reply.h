/*
 * reply.h - from an LLM's reply to a candidate's source: the code in its
 * fenced blocks either replaces functions of the parent by name (splice.h)
 * or, when a block is a whole file (it defines kl_run and has its
 * #includes; or it is a PyTorch extension; or a ```python block with a
 * KernelBench ModelNew: torchext.h), becomes the candidate as it is.  A
 * reply with no usable code gets a reason that can be sent back to the
 * model.
 */
#ifndef KL_REPLY_H
#define KL_REPLY_H

#include <stddef.h>

struct reply_code {
	char *zSource;  /* the candidate's source, NUL-terminated */
	size_t nSource; /* its length */
	int whole;      /* 1: a whole file taken as it is; 0: spliced into the parent */
	char *zChanges; /* what changed, for people: "whole file", "replaced kl_run; added warp_max"
	                 */
	int form;       /* what the source is (enum torchext_form): a kl_run file, a
	                   PyTorch extension, a ModelNew module (Python) */
};

/*
 * Make a candidate from zReply (nReply bytes) and its parent's source
 * (zParent, nParent bytes).  The last code block that is a whole file is
 * taken whole (a reply that shows the old file and then the new one gives
 * the new one); otherwise every C, C++ or CUDA block is spliced into the
 * parent (a ModelNew parent, Python, takes a whole module only).  Fills
 * *out (freed with reply_code_free()) and returns 0, or -1 with err saying
 * why: no code block, code that does not parse (with the reply line), code
 * that elides parts ("// ... unchanged"), or a result without kl_run (or an
 * extension's module).
 */
int reply_code(const char *zParent, size_t nParent, const char *zReply, size_t nReply,
               struct reply_code *out, char *err);
void reply_code_free(struct reply_code *r);

#endif
