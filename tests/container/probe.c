/*
 * probe.c - for tests/container/test_container_ns.sh: run inside the
 * test's minimal root, says for each path argument whether it is there
 * ("present PATH" or "absent PATH"), so the test can show what the ranks
 * see of the host. Exit 0; 2 on a usage error.
 */
#include <stdio.h>
#include <sys/stat.h>

int main(int argc, char **argv)
{
	struct stat st;

	if (argc < 2) {
		fprintf(stderr, "usage: probe PATH...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		printf("%s %s\n", lstat(argv[i], &st) == 0 ? "present" : "absent", argv[i]);
	return 0;
}
