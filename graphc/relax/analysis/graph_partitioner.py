"""The fusion partitioner: a dataflow graph, its post-dominator tree and TVM's grouping rules.

FuseOps describes each dataflow block as a graph of `Node`s (a value, its `OpPatternKind`
and its users, each edge carrying the user's pattern); `GraphPartitioner` merges nodes into
groups with TVM's three-phase algorithm over the post-dominator tree, which
`post_dominator_tree` computes with `networkx.immediate_dominators` on the reversed graph.

>>> from graphc.relax.op.registry import OpPatternKind as K
>>> a, b, c = Node("a"), Node("b"), Node("c")
>>> a.pattern, b.pattern, c.pattern = K.kElemWise, K.kElemWise, K.kElemWise
>>> a.outputs.append((b, K.kElemWise)); b.outputs.append((c, K.kElemWise))
>>> c.extern_ref = True  # the block's output
>>> for i, n in enumerate([a, b, c]):
...     n.index = i
>>> groups = GraphPartitioner(opt_level=2, max_fuse_depth=256).partition([a, b, c])
>>> len({id(g.find_root()) for g in groups})
1
"""

from __future__ import annotations

import networkx as nx

from ..op.registry import OpPatternKind

__all__ = ["GraphPartitioner", "Group", "Node", "post_dominator_tree"]

K = OpPatternKind


class Node:
    """A graph node: a binding var, a parameter or a leaf constant, with its users."""

    __slots__ = ("ref", "index", "extern_ref", "pattern", "outputs")

    def __init__(self, ref):
        self.ref = ref
        self.index = -1
        self.extern_ref = False
        self.pattern = K.kOpaque
        self.outputs: list[tuple[Node, OpPatternKind]] = []


# --- the post-dominator tree --------------------------------------------------------------

_EXIT = -1


class _DomNode:
    __slots__ = ("gnode", "parent", "pattern")

    def __init__(self, gnode: Node, parent, pattern: OpPatternKind):
        self.gnode, self.parent, self.pattern = gnode, parent, pattern


def post_dominator_tree(nodes: list[Node]) -> list[_DomNode]:
    """Immediate post-dominators, with the pattern combined along the paths to each one.

    Block outputs and parameters (external references) have none: fusion stops at them.
    """
    graph = nx.DiGraph()
    graph.add_node(_EXIT)
    for node in nodes:
        graph.add_node(node.index)
        if node.extern_ref or not node.outputs:
            graph.add_edge(node.index, _EXIT)
        else:
            for user, _ in node.outputs:
                graph.add_edge(node.index, user.index)
    idom = nx.immediate_dominators(graph.reverse(copy=False), _EXIT)
    tree: list[_DomNode | None] = [None] * len(nodes)
    for node in reversed(nodes):  # users before their producers
        if node.extern_ref:
            tree[node.index] = _DomNode(node, None, K.kOpaque)
            continue
        parent_index = idom.get(node.index, _EXIT)
        if parent_index == _EXIT or not node.outputs:
            tree[node.index] = _DomNode(node, None, K.kElemWise)
            continue
        parent = tree[parent_index]
        pattern = K.kElemWise
        for user, edge_pattern in node.outputs:
            pattern = max(pattern, edge_pattern)
            dom = tree[user.index]
            while dom is not parent:  # the patterns met on the way up to the post-dominator
                pattern = max(pattern, dom.pattern)
                dom = dom.parent
        tree[node.index] = _DomNode(node, parent, pattern)
    return tree


# --- the partitioner ----------------------------------------------------------------------


class Group:
    """A union-find set of nodes fused together."""

    __slots__ = ("parent", "pattern", "root_ref", "anchor_ref", "num_nodes", "attrs")

    def __init__(self, pattern: OpPatternKind, ref):
        self.parent: Group | None = None
        self.pattern = pattern
        self.root_ref = ref
        self.anchor_ref = ref if pattern == K.kOutEWiseFusable else None
        self.num_nodes = 1
        self.attrs: dict = {}

    def find_root(self) -> Group:
        root = self
        while root.parent is not None:
            root = root.parent
        node = self
        while node is not root:  # path compression
            node.parent, node = root, node.parent
        return root


def _combine(lhs: OpPatternKind, rhs: OpPatternKind) -> OpPatternKind:
    if lhs > K.kBroadcast and rhs > K.kBroadcast:
        raise AssertionError(f"FuseOps: cannot merge two complex groups ({lhs.name}, {rhs.name})")
    return max(lhs, rhs)


class GraphPartitioner:
    """TVM's fusion algorithm over the post-dominator tree (see the module docstring)."""

    def __init__(self, opt_level: int, max_fuse_depth: int):
        self.opt_level, self.max_fuse_depth = opt_level, max_fuse_depth
        self.groups: list[Group] = []
        self.visited: set = set()

    def partition(self, nodes: list[Node]) -> list[Group]:
        self.groups = [Group(node.pattern, node.ref) for node in nodes]
        if self.opt_level == 0 or not nodes:
            return self.groups
        tree = post_dominator_tree(nodes)
        for phase in range(3):
            self.run_fuse(nodes, tree, phase)
        return self.groups

    def check_path(self, src: Node, sink: Node, fcond) -> bool:
        self.visited = set()
        return all(self._check_path(user, sink, fcond) for user, _ in src.outputs)

    def _check_path(self, src: Node, sink: Node, fcond) -> bool:
        if src.index in self.visited:
            return True
        self.visited.add(src.index)
        group = self.groups[src.index].find_root()
        if not fcond(group.pattern, src is sink):
            return False
        if src is sink:
            return True
        return all(self._check_path(user, sink, fcond) for user, _ in src.outputs)

    def merge(self, child: Group, parent: Group) -> None:
        child, parent = child.find_root(), parent.find_root()
        if child is parent:
            return
        parent.num_nodes += child.num_nodes
        child.parent = parent
        if child.anchor_ref is not None:
            assert parent.anchor_ref is None, "FuseOps: two anchors in one group"
            parent.anchor_ref = child.anchor_ref
            parent.pattern = _combine(child.pattern, parent.pattern)

    def commit_fuse(self, src: Node, sink: Node) -> None:
        target = self.groups[sink.index]
        self.visited = set()
        self._commit_fuse(src, sink, target)

    def _commit_fuse(self, src: Node, sink: Node, target: Group) -> None:
        if src is sink or src.index in self.visited:
            return
        self.visited.add(src.index)
        self.merge(self.groups[src.index], target)
        for user, _ in src.outputs:
            self._commit_fuse(user, sink, target)

    def count_fused_nodes_with_new_child(self, child: Node, dom_parent: Node) -> int:
        self.visited = set()
        return self.groups[dom_parent.index].find_root().num_nodes + self._count_up_to_sink(child, dom_parent)

    def _count_up_to_sink(self, src: Node, sink: Node) -> int:
        if src is sink or src.index in self.visited:
            return 0
        self.visited.add(src.index)
        total = self.groups[src.index].num_nodes
        for user, _ in src.outputs:
            total += self._count_up_to_sink(user, sink)
        return total

    def run_fuse(self, nodes: list[Node], tree: list[_DomNode], phase: int) -> None:
        for node, dom in zip(nodes, tree):
            group = self.groups[node.index]
            if group.pattern == K.kOpaque or dom.parent is None:
                continue
            sink = dom.parent.gnode
            if self.count_fused_nodes_with_new_child(node, sink) > self.max_fuse_depth:
                continue
            parent_group = self.groups[sink.index]
            if phase == 2:
                # Injective ops join intermediate tuples that already joined injective ops.
                if group.pattern > K.kInjective:
                    continue
                root = parent_group.find_root()
                if root.pattern == K.kTuple:
                    continue
                if parent_group.pattern == K.kTuple and root.pattern <= K.kInjective:
                    if self.check_path(node, sink, lambda kind, is_sink: kind <= K.kInjective):
                        self.commit_fuse(node, sink)
                continue
            if group.find_root() is parent_group.find_root():
                continue
            if parent_group.pattern == K.kTuple:
                continue
            if group.pattern == K.kOutEWiseFusable:
                if phase != 0:
                    continue
                if dom.pattern == K.kElemWise:
                    if self.check_path(node, sink, lambda kind, is_sink: kind <= K.kBroadcast):
                        self.commit_fuse(node, sink)
            elif group.pattern <= K.kBroadcast:
                if dom.pattern <= K.kInjective or dom.pattern == K.kCommReduce:
                    if self.check_path(node, sink, _broadcast_path_ok):
                        self.commit_fuse(node, sink)
            elif group.pattern in (K.kInjective, K.kTuple):
                if phase != 1:
                    continue  # after phase 0, so that out-elementwise-fusable ops finish first
                if self.check_path(node, sink, lambda kind, is_sink: kind <= K.kInjective):
                    self.commit_fuse(node, sink)
            # a reduction (kCommReduce) never fuses into what follows it


def _broadcast_path_ok(kind: OpPatternKind, is_sink: bool) -> bool:
    if not is_sink:
        return kind <= K.kInjective
    return kind <= K.kInjective or kind in (K.kCommReduce, K.kOutEWiseFusable)
