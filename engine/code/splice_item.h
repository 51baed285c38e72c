/*
 * splice_item.h - the kinds of top-level item of a C, C++ or CUDA source
 * that splice.h's edits work on: read from a source by unit.h, named in
 * splice.h's changes.  Apart from splice.h so that unit.h (which splice.c
 * uses) needs no more of splice than these.
 */
#ifndef KL_SPLICE_ITEM_H
#define KL_SPLICE_ITEM_H

enum splice_item {
	SPLICE_FUNCTION, /* a function definition */
	SPLICE_MACRO,    /* #define */
	SPLICE_INCLUDE,  /* #include */
	SPLICE_DECL,     /* another top-level declaration: struct, constant, using */
};

#endif
