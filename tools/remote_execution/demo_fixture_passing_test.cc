// A fixture of demo_verdicts_test: a test that passes, and has a compile and a
// link for the cluster to run before it.
int main() { return 0; }
