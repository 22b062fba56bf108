/* A main for the fuzz targets without libFuzzer (any C compiler): runs the entry function
 * once on each file named, or on each file of each directory named, like libFuzzer's
 * standalone drivers. `make check` replays the seed corpus and t/data/bad/fuzz this way. */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    uint8_t *buf = malloc((size_t)n + 1);
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (!buf || got != (size_t)n) {
        fprintf(stderr, "replay: %s: cannot read\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, got);
    free(buf);
    return 0;
}

static int replay(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: no such file\n", path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return replay_file(path);
    }
    struct dirent **names;
    int n = scandir(path, &names, NULL, alphasort), rc = 0;
    if (n < 0) {
        fprintf(stderr, "replay: %s: cannot list\n", path);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        char sub[PATH_MAX];
        if (names[i]->d_name[0] != '.') {
            snprintf(sub, sizeof(sub), "%s/%s", path, names[i]->d_name);
            if (stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
                (*count)++;
                if (replay_file(sub) < 0)
                    rc = -1;
            }
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int count = 0, rc = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (replay(argv[i], &count) < 0)
            rc = 1;
    printf("replayed %d inputs\n", count);
    return rc;
}
