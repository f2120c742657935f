/*
 * pthread_link.c - a link-time stand-in for glibc 2.28's libpthread.so.0,
 * never installed and never loaded: tuner/libpthread-link/libpthread.so.0
 * is built from it only to link libnccl-tuner-bot.so against (Makefile.inc).
 *
 * Why. The .so calls pthread_create (tuner/spoolwriter.c's writer thread) and
 * must load on glibc 2.28, where pthread_create@@GLIBC_2.2.5 (x86-64;
 * GLIBC_2.17 on aarch64) is defined in libpthread.so.0 only. Linked on
 * glibc >= 2.34, where it lives in libc.so.6 (pthread_create@@GLIBC_2.34,
 * with the old version kept as a compat symbol), the reference would name
 * libc.so.6 as the file of its version (DT_VERNEED). glibc before 2.30
 * (before BZ 24741) holds a versioned reference to that file: reaching
 * libc.so.6 in the lookup scope without finding the symbol there is
 * "symbol pthread_create, version GLIBC_2.2.5 not defined in file
 * libc.so.6 with link time reference", and dlopen() fails - whenever
 * libc.so.6 comes before libpthread.so.0 in the scope, as in a program
 * that links NCCL but not libpthread itself. Linked against this stand-in
 * first, every symbol below is recorded as libpthread.so.0's, as a build
 * on glibc 2.28 records it: glibc 2.28 finds them in libpthread.so.0, and
 * glibc >= 2.30 looks for a version in every object, so 2.34+ finds them
 * in libc.so.6 (libpthread.so.0 still defines the version node).
 * tests/unit/test_so_deps.sh checks the result.
 *
 * Only the names and versions matter; the bodies are never run.
 */
#if defined(__x86_64__)
#define BOT_PT_VER "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define BOT_PT_VER "GLIBC_2.17"
#else
#error "the rank-side library is built for x86-64 and aarch64 only"
#endif

#define BOT_PT_STUB(name)							\
	int bot_pt_##name(void);						\
	int bot_pt_##name(void)							\
	{									\
		return 0;							\
	}									\
	__asm__(".symver bot_pt_" #name ", " #name "@@" BOT_PT_VER)

BOT_PT_STUB(pthread_create);
BOT_PT_STUB(pthread_attr_init);
BOT_PT_STUB(pthread_attr_destroy);
BOT_PT_STUB(pthread_attr_setdetachstate);
