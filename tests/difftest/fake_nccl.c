/*
 * fake_nccl.c - the one libnccl function the rank-side library may look
 * up: ncclGetVersion(), answering what difftest.c sets (0: fail, as when
 * the version is unknown). Loaded into each build's namespace.
 */
int difftest_nccl_version;

int ncclGetVersion(int *version);

int ncclGetVersion(int *version)
{
	if (!difftest_nccl_version || !version)
		return 4;	/* ncclInvalidArgument */
	*version = difftest_nccl_version;
	return 0;
}
