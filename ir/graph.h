/*
 * graph.h - the graph IR: an SSA graph of ONNX-level ops.
 *
 * A Graph owns an Arena; every Value, Node, Attr, string and constant
 * payload of the graph lives in it and is freed by graph_destroy().
 *
 * Values and nodes are referred to by index (int) into g->val and g->node,
 * never by pointer, because the arrays grow.  Index -1 means "absent" (an
 * omitted optional input).  Each value is defined once: by a graph input, by
 * a constant (initializer or folded result, v->data != NULL), or as output
 * k of exactly one node (v->producer, v->producer_out).
 *
 * Shapes: v->rank dims in v->dim[]; a symbolic dim has dim[i] = -1 and its
 * name in sym[i].  Scalars have rank 0.  v->dtype == DT_UNDEF until shape
 * inference has run (or the model said it).
 *
 * Nodes are kept in topological order once graph_toposort() has run (the
 * loader calls it); passes keep that order.  Dead nodes are marked n->dead
 * and dropped by graph_compact().
 */
#ifndef BURN_GRAPH_H
#define BURN_GRAPH_H

#include "base.h"
#include "ops.h"

#define BURN_MAX_RANK 8

typedef struct Graph Graph;

enum AttrType { /* numbers are ONNX's AttributeProto.AttributeType */
	AT_UNDEF = 0, AT_FLOAT = 1, AT_INT = 2, AT_STRING = 3, AT_TENSOR = 4,
	AT_GRAPH = 5, AT_FLOATS = 6, AT_INTS = 7, AT_STRINGS = 8,
	AT_TENSORS = 9, AT_GRAPHS = 10, AT_SPARSE_TENSOR = 11,
	AT_SPARSE_TENSORS = 12, AT_TYPE_PROTO = 13, AT_TYPE_PROTOS = 14
};

/* A constant tensor (attribute payload or value data). */
typedef struct Tensor {
	int dtype;
	int rank;
	int64_t dim[BURN_MAX_RANK];
	void *data;          /* little-endian elements, nbytes long, arena-owned */
	int64_t nbytes;
} Tensor;

typedef struct Attr {
	const char *name;
	int type;            /* AttrType */
	int64_t i;           /* AT_INT */
	double f;            /* AT_FLOAT */
	const char *s;       /* AT_STRING, NUL-terminated (slen bytes) */
	int64_t slen;
	int n;               /* element count for the list kinds */
	int64_t *ints;       /* AT_INTS */
	double *floats;      /* AT_FLOATS */
	const char **strs;   /* AT_STRINGS */
	Tensor *t;           /* AT_TENSOR */
	Tensor **ts;         /* AT_TENSORS */
	Graph *g;            /* AT_GRAPH */
	Graph **gs;          /* AT_GRAPHS */
} Attr;

/* VK_SEQ: an ONNX sequence of compile-time length, its elements the
 * tensor values elem[0..nelem-1]; VK_OPTNONE: an empty optional.  Both exist
 * only during inference (passes/ops_seq.c): the nodes making or reading
 * them are resolved into tensor ops, and sequence graph outputs become
 * their elements, so no later pass sees either kind. */
enum ValueKind { VK_TEMP = 0, VK_INPUT, VK_CONST, VK_SEQ, VK_OPTNONE };

/* What a graph input of the model declares (Value.decl), for the binding
 * of sequences and optionals to data (graph_bind_input): a sequence's
 * length, and whether an optional holds a value, come with the data. */
enum ValueDecl { VD_TENSOR = 0, VD_SEQ, VD_OPT, VD_OPT_SEQ };

typedef struct Value {
	const char *name;
	int kind;            /* ValueKind */
	int dtype;           /* DType, DT_UNDEF before inference */
	int rank;            /* -1 while unknown */
	int64_t dim[BURN_MAX_RANK];
	const char *sym[BURN_MAX_RANK]; /* name of a symbolic dim, else NULL */
	void *data;          /* constant payload (arena), or NULL */
	int producer;        /* node index, -1 for inputs and constants */
	int producer_out;    /* output slot of the producer */
	int is_output;       /* listed in the graph outputs */
	int decl;            /* ValueDecl of a graph input; VD_TENSOR else */
	int nelem;           /* VK_SEQ: element count */
	int *elem;           /* VK_SEQ: element values (arena) */
} Value;

typedef struct Node {
	int op;              /* OpId */
	const char *name;    /* node name; the loader invents one if empty */
	const char *domain;  /* "" for ai.onnx */
	int nin, nout, nattr;
	int *in;             /* value indices, -1 = omitted optional input */
	int *out;            /* value indices, -1 = omitted optional output */
	Attr *attr;
	int dead;            /* removed by a pass; dropped by graph_compact */
	/* A node of a run-time If's branch (passes/ctrlflow.c): needed only
	 * when bool value guard - 1 is true (guard_neg 0) or false (1); 0:
	 * always.  Its outputs are read only by nodes of the same branch and
	 * the If's select, so running it anyway is never wrong: the guard
	 * lets the launch list skip it (Launch.guard). */
	int guard, guard_neg;
} Node;

struct Graph {
	Arena arena;
	const char *name;
	Graph *parent;       /* enclosing graph for subgraphs, else NULL */
	int opset;           /* ai.onnx opset version of the model */
	int nval, nnode, nin, nout;
	int capval, capnode;
	Value *val;
	Node *node;
	int *in;             /* graph inputs (value indices), in order */
	int *out;            /* graph outputs (value indices), in order */
	/* The type the model declares for each output (nout entries: dtype
	 * DT_UNDEF, rank -1, dim -1 where it says nothing), or NULL; checked
	 * against the computed types by graph_check_outputs. */
	Value *out_decl;
	/* The string heap (runtime/strings.inc) the lowering made: value
	 * index + 1, 0 if none.  It lives to the end of a run (passes/plan.c)
	 * and the run function reports its errors (codegen/c/emit_c.c). */
	int str_heap;
};

/* ---- building ------------------------------------------------------- */

/* Create an empty graph; returns NULL only if the system allocator fails. */
Graph *graph_create(const char *name);
void graph_destroy(Graph *g);
/* A subgraph shares nothing with its parent but the pointer; it is owned by
 * the parent's arena only through the Attr that holds it, so the loader
 * destroys subgraphs through graph_destroy of the root (it walks attrs). */
Graph *graph_create_sub(Graph *parent, const char *name);

/* New value with the given name (copied); returns its index. */
int graph_add_value(Graph *g, const char *name);
/* New node; in[]/out[] copied; attrs appended later with node_add_attr. */
int graph_add_node(Graph *g, int op, const char *name, int nin, const int *in,
                   int nout, const int *out);
Attr *node_add_attr(Graph *g, int node, const char *name, int type);
void graph_add_input(Graph *g, int v);
void graph_add_output(Graph *g, int v);
/*
 * Bind graph input i, declared a sequence or an optional (Value.decl), to
 * what its data holds: kind VD_TENSOR (one tensor t[0]: the input stays,
 * with t's type), VD_SEQ (n tensors: the input becomes n tensor inputs
 * named "NAME/K", in its place, and its value a VK_SEQ of them) or -1 (an
 * empty optional: VK_OPTNONE, no longer an input).  Only t's types are read.
 * The input counts and order change: the caller binds from the last input
 * to the first, or tracks the shift.
 */
int graph_bind_input(Ctx *c, Graph *g, int i, int kind, int n, const Tensor *t);
/* Make v a constant holding a copy of t's data (dtype and shape too). */
int graph_set_const(Ctx *c, Graph *g, int v, int dtype, int rank,
                    const int64_t *dim, const void *data);
/* Look up a value by name; -1 if none.  Linear; for tools and tests. */
int graph_find_value(const Graph *g, const char *name);

/* ---- queries -------------------------------------------------------- */

#define GV(g, i) (&(g)->val[(i)])
#define NIN(g, n, k) ((k) < (n)->nin && (n)->in[k] >= 0 ? &(g)->val[(n)->in[k]] : NULL)
#define NOUT(g, n, k) (&(g)->val[(n)->out[k]])

int64_t value_numel(const Value *v);   /* -1 if a dim is symbolic/unknown */
int64_t value_nbytes(const Value *v);  /* -1 likewise */
int value_shape_known(const Value *v); /* rank >= 0 and no symbolic dim */
/* Copy shape (rank and dims) from src to dst. */
void value_copy_shape(Value *dst, const Value *src);
/* "f32[2,3,N]" into buf; returns buf. */
char *value_type_str(const Value *v, char *buf, size_t n);

const Attr *node_attr(const Node *n, const char *name);
int64_t attr_int(const Node *n, const char *name, int64_t dflt);
double attr_float(const Node *n, const char *name, double dflt);
const char *attr_str(const Node *n, const char *name, const char *dflt);
/* Number of ints in attribute name (0 if absent); *out points into the node. */
int attr_ints(const Node *n, const char *name, const int64_t **out);

/* The AttrType ONNX gives attribute name of op (an OpId) at opset, or
 * AT_UNDEF for a name it does not define; attr_type_name says it in words
 * ("an int", "floats"). */
int attr_type_expected(int op, int opset, const char *name);
const char *attr_type_name(int type);
/* Check every attribute's type against attr_type_expected, subgraphs too;
 * an error names the node, the attribute, its type and the expected one. */
int graph_check_attrs(Ctx *c, const Graph *g);
/* Each output's computed dtype and shape agree with g->out_decl where that
 * says something (a symbolic or unknown declared dim agrees with any). */
int graph_check_outputs(Ctx *c, const Graph *g);

/* Read element i of a constant value as int64 / double (any dtype). */
int64_t value_get_i(const Value *v, int64_t i);
double value_get_f(const Value *v, int64_t i);

/* ---- whole-graph operations ----------------------------------------- */

/* Order nodes so producers precede consumers; error on a cycle. */
int graph_toposort(Ctx *c, Graph *g);
/* Drop dead nodes (renumbering); values stay. */
void graph_compact(Graph *g);
/* Check the SSA invariants: each value defined once, inputs defined before
 * use, arities match the op table, shapes consistent when known. */
int graph_verify(Ctx *c, const Graph *g);

/* Text form: prints a graph that ir_parse() reads back into an equal graph.
 * Constants with more than elide_over elements are printed as "<elided>"
 * (which does not parse back) unless elide_over < 0. */
#include <stdio.h>
void ir_print(FILE *f, const Graph *g, int64_t elide_over);
/* Parse text (len bytes) into a new graph; on error returns status and
 * *out = NULL, with the line number in the message. */
int ir_parse(Ctx *c, const char *text, size_t len, Graph **out);

#endif
