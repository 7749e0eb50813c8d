//! The dictionary's stack table, held as a tree of locations rather than as
//! the lists of locations it is written as: a sample's stack is a path from
//! a root frame to its top frame, and the paths of a deep call tree add up
//! to the square of its depth, while the tree has a node per distinct path.
//! Two samples whose paths name the same locations share one node, and so
//! one stack index (as equal location lists shared one before).

use super::field::{DICT_STACK_TABLE, STACK_LOCATION_INDICES};
use crate::wire::{len_header, len_prefix, put_bytes, varint};
use std::collections::HashMap;
use std::io::{self, Write};

/// The parent of the outermost frames' nodes.
pub const TOP: u32 = u32::MAX;

#[derive(Default)]
pub struct Stacks {
    /// Per node: (parent node or [`TOP`], location index).
    nodes: Vec<(u32, u32)>,
    /// (parent node, location) -> node.
    children: HashMap<(u32, u32), u32>,
    /// Per node: its stack index, or 0 while no sample has it.
    index: Vec<u32>,
    /// The node of each stack index from 1 (entry 0, the zero value, has none).
    order: Vec<u32>,
}

impl Stacks {
    /// The node of location `location` called from `parent`'s path.
    pub fn child(&mut self, parent: u32, location: u32) -> u32 {
        let next = self.nodes.len() as u32;
        *self.children.entry((parent, location)).or_insert_with(|| {
            self.nodes.push((parent, location));
            self.index.push(0);
            next
        })
    }

    /// The stack index of `node`'s path (the next one the first time).
    pub fn index(&mut self, node: u32) -> u32 {
        let slot = &mut self.index[node as usize];
        if *slot == 0 {
            self.order.push(node);
            *slot = self.order.len() as u32;
        }
        *slot
    }

    /// Stacks with an index.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Writes the table as the dictionary's entries: the zero
    /// value, then each stack, its locations leaf first, in index order. What
    /// it holds is one stack's bytes.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        put_bytes(out, DICT_STACK_TABLE, &[])?;
        let mut packed = Vec::new();
        let mut stack = Vec::new();
        for &leaf in &self.order {
            packed.clear();
            let mut n = leaf;
            while n != TOP {
                let (parent, location) = self.nodes[n as usize];
                varint(&mut packed, location as u64);
                n = parent;
            }
            stack.clear();
            if !packed.is_empty() {
                len_prefix(&mut stack, STACK_LOCATION_INDICES, packed.len() as u64);
            }
            len_header(out, DICT_STACK_TABLE, (stack.len() + packed.len()) as u64)?;
            out.write_all(&stack)?;
            out.write_all(&packed)?;
        }
        Ok(())
    }
}
