/*
 * version.h - kloop's version, which kloop and kloop-worker must share: a
 * worker of another version is refused when it says hello (worker.c).
 */
#ifndef KL_VERSION_H
#define KL_VERSION_H

#define KLOOP_VERSION "0.1.0"

#endif
