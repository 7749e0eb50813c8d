//! What each event becomes in the document, and the ids defined on the
//! way: a thread at its first event, a class and a method at their first
//! use, an object at its allocation (or, an exception or a monitor, with
//! `objDef` at its first use), each once per document.

use super::event::Kind;
use super::tptp::{self, Call};
use super::writer::{Site, Source, Staged, Writer};
use std::io;

impl Writer {
    /// The next id: one sequence for every kind. Past 2³² - 1 it starts
    /// again from 1 (an object id that old has long been freed or
    /// forgotten; the format allows reuse after an undefining element).
    pub(super) fn new_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id = self.next_id.checked_add(1).unwrap_or(1);
        id
    }

    /// The Java thread `key` (met at a ring's switch to it; one never met
    /// is nameless).
    pub(super) fn source(&mut self, key: u64) -> &mut Source {
        self.threads.entry(key).or_insert_with(|| Source {
            thread: None,
            name: None,
            id: 0,
            defined_in: 0,
            exception: (0, 0),
            stack: Vec::new(),
        })
    }

    /// The trace id of Java thread `key`, defined (threadStart) at its
    /// first use in the document.
    pub(super) fn thread(&mut self, key: u64, unix_ns: u64) -> io::Result<u32> {
        if self.source(key).id == 0 {
            let id = self.new_id();
            self.source(key).id = id;
        }
        let number = self.number;
        let s = self.source(key);
        let (id, thread) = (s.id, s.thread);
        if std::mem::replace(&mut s.defined_in, number) != number {
            let name = match s.name.clone() {
                Some(name) => name,
                None => thread
                    .and_then(|t| self.sources.threads.name(t))
                    .unwrap_or_else(|| "(unknown)".into()),
            };
            self.doc().thread_start(id, unix_ns, &name)?;
        }
        Ok(id)
    }

    /// The trace id of class `name` (as Java writes it), defined at its
    /// first use in the document.
    pub(super) fn class(&mut self, name: &str, unix_ns: u64) -> io::Result<u32> {
        let (id, defined_in) = match self.classes.get(name) {
            Some(&c) => c,
            None => (self.new_id(), 0),
        };
        if defined_in != self.number {
            self.classes.insert(name.to_owned(), (id, self.number));
            self.doc().class_def(id, name, unix_ns)?;
        }
        Ok(id)
    }

    /// The trace ids of registry method `m` and its class, defined at
    /// their first use in the document.
    pub(super) fn method(&mut self, m: u32, unix_ns: u64) -> io::Result<(u32, u32)> {
        let i = m as usize;
        if self.methods.len() <= i {
            self.methods.resize(i + 1, (0, 0, 0));
        }
        let (id, class, defined_in) = self.methods[i];
        if defined_in == self.number {
            return Ok((id, class));
        }
        let info = self.sources.registry.get(m).unwrap_or_else(|| {
            crate::instrument::registry::MethodInfo {
                class: "(unknown)".into(),
                name: format!("(method {m})"),
                descriptor: "()V".into(),
            }
        });
        let class = self.class(&info.class.replace('/', "."), unix_ns)?;
        let id = if id == 0 { self.new_id() } else { id };
        self.methods[i] = (id, class, self.number);
        self.doc()
            .method_def(id, &info.name, &info.descriptor, class)?;
        Ok((id, class))
    }

    /// `objDef` of object `id` of type `ty` (a type id), unless `defined_in`
    /// is this document; answers the document that now defines it.
    fn object(&mut self, (id, defined_in): (u32, u32), ty: u32, unix_ns: u64) -> io::Result<u32> {
        if defined_in != self.number {
            let name = self.sources.sites.type_name(ty);
            let class = self.class(&name, unix_ns)?;
            self.doc().obj_def(id, class)?;
        }
        Ok(self.number)
    }

    pub(super) fn element(&mut self, s: &Staged) -> io::Result<()> {
        let e = &s.e;
        let unix_ns = self.ticks_to_unix(e.time);
        match e.kind {
            Kind::GcStart | Kind::GcFinish => {
                return self.doc().gc(e.kind == Kind::GcStart, unix_ns);
            }
            Kind::ObjFree => {
                // An object made before this document began is not in it.
                return match self.live.remove(&e.b) {
                    Some((id, made_in)) if made_in == self.number => {
                        self.doc().obj_free(id, unix_ns)
                    }
                    _ => Ok(()),
                };
            }
            Kind::ThreadEnd => {
                // The thread's last event: it is forgotten once written.
                let number = self.number;
                let Some(s) = self.threads.remove(&s.source) else {
                    return Ok(());
                };
                if s.id != 0 && s.defined_in == number {
                    self.doc().thread_end(s.id, unix_ns)?;
                }
                return Ok(());
            }
            Kind::Switch => return Ok(()),
            _ => {}
        }
        let thread = self.thread(s.source, unix_ns)?;
        match e.kind {
            Kind::Lost => return self.doc().lost(thread, e.ticket()),
            Kind::ObjAlloc | Kind::ObjSample => return self.allocation(s, thread, unix_ns),
            Kind::MonitorEnter | Kind::MonitorEntered => {
                let monitor = match self.monitors.get(&(e.b as u32)) {
                    Some(&m) => m,
                    None => (self.new_id(), 0),
                };
                let defined_in = self.object(monitor, e.extra, unix_ns)?;
                self.monitors.insert(e.b as u32, (monitor.0, defined_in));
                let entered = e.kind == Kind::MonitorEntered;
                return self.doc().monitor(entered, thread, monitor.0, unix_ns);
            }
            _ => {}
        }
        let (method, _) = self.method(e.method, unix_ns)?;
        let call = Call {
            thread,
            method,
            ticket: e.ticket(),
            depth: e.depth,
        };
        let stack = &mut self.source(s.source).stack;
        match e.kind {
            Kind::Entry => stack.push((e.method, e.ticket())),
            Kind::Exit => {
                if let Some(i) = stack.iter().rposition(|c| c.1 == e.ticket()) {
                    stack.truncate(i);
                }
            }
            _ => {}
        }
        match e.kind {
            Kind::Entry => {
                let i = e.method as usize;
                if self.counts.len() <= i {
                    self.counts.resize(i + 1, 0);
                }
                self.counts[i] += 1;
                self.doc().method_event(true, call, unix_ns)
            }
            Kind::Exit => self.doc().method_event(false, call, unix_ns),
            Kind::Throw | Kind::ThrowNew | Kind::Catch => {
                let source = s.source;
                let mut exception = self.source(source).exception;
                if e.kind == Kind::ThrowNew || exception.0 == 0 {
                    exception = (self.new_id(), 0);
                }
                let defined_in = self.object(exception, e.extra, unix_ns)?;
                self.source(source).exception = (exception.0, defined_in);
                let throw = e.kind != Kind::Catch;
                self.doc().exception(throw, call, exception.0, unix_ns)
            }
            _ => Ok(()),
        }
    }

    /// `objAlloc` of an object `memory` tracked (`ObjAlloc`) or `alloc`
    /// sampled (`ObjSample`).
    pub(super) fn allocation(&mut self, s: &Staged, thread: u32, unix_ns: u64) -> io::Result<()> {
        let e = &s.e;
        let (ty, method, line, size) = if e.kind == Kind::ObjSample {
            let ty = self.sources.sites.type_name(e.extra);
            (ty, None, None, Some(e.depth as u64))
        } else {
            let site = self.site(e.method);
            (site.ty.clone(), site.method, site.line, None)
        };
        // The allocating call: the thread's innermost call of that method.
        let top = self.source(s.source).stack.last().copied();
        let (method, ticket) = match (method, top) {
            (Some(m), Some((top_m, ticket))) if top_m == m => (Some(m), ticket),
            (m, _) => (m, 0),
        };
        let method = match method {
            Some(m) => Some(self.method(m, unix_ns)?.0),
            None => None,
        };
        let class = self.class(&ty, unix_ns)?;
        let id = self.new_id();
        if e.b != 0 {
            self.live.insert(e.b, (id, self.number));
        }
        let obj = tptp::ObjAlloc {
            id,
            class,
            is_array: tptp::array_code(&ty),
            size,
            method,
            ticket,
            line,
        };
        self.doc().obj_alloc(thread, obj, unix_ns)
    }

    /// Allocation site `site`, looked up once.
    pub(super) fn site(&mut self, site: u32) -> &Site {
        let (sources, sites) = (self.sources, &mut self.sites);
        sites.entry(site).or_insert_with(|| {
            let (ty, place) = sources
                .sites
                .site(site)
                .unwrap_or_else(|| (format!("(site {site})"), None));
            let method = place.as_ref().map(|p| {
                sources
                    .registry
                    .id(crate::instrument::registry::MethodInfo {
                        class: p.class.clone(),
                        name: p.method.clone(),
                        descriptor: p.descriptor.clone(),
                    })
            });
            Site {
                ty,
                method,
                line: place.and_then(|p| p.line),
            }
        })
    }
}
