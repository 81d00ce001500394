/* kb_none.c -- the empty built-in knowledge base that the generator itself links against. */
#include "kb.h"

const dx_builtin *dx_builtin_get(void)
{
    static const dx_builtin none = {NULL, 0, NULL, 0};
    return &none;
}
