/* util.c - helpers */
#include <stdio.h>
#include <stdlib.h>

#define SQUARE(x) ((x) * (x))
#define SWAP(a, b) do { \
        int t = (a);    \
        (a) = (b);      \
        (b) = t;        \
    } while (0)

struct point {
    int x, y;
};

typedef struct {
    double w;
} weight;

typedef int (*cmp_fn)(const void *, const void *);

static int helper(int a);

/* Adds two numbers. */
int add(int a, int b)
{
    return a + b;
}

static int
helper(int a)
{
    const char *s = "int fake(void) {";
    return a * 2;
}

int main(int argc, char **argv) {
    printf("%d\n", add(argc, helper(1)));
    return 0;
}
