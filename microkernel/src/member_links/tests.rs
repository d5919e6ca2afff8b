//! Tests of `member_links`: joins at the front, leaves from anywhere, the
//! links answered both ways.

use super::*;

/// A list over a vector of links, its head beside them.
struct Fake {
    head: Option<ThreadId>,
    links: Vec<MemberLinks>,
}

impl MemberList for Fake {
    fn head(&mut self) -> Option<&mut Option<ThreadId>> {
        Some(&mut self.head)
    }

    fn links(&mut self, thread: ThreadId) -> &mut MemberLinks {
        &mut self.links[thread.index()]
    }
}

/// The threads from the head on, checking each `previous` on the way.
fn walk(list: &Fake) -> Vec<ThreadId> {
    let mut order = Vec::new();
    let (mut previous, mut at) = (None, list.head);
    while let Some(thread) = at {
        let links = list.links[thread.index()];
        assert_eq!(links.previous(), previous, "links answered both ways");
        order.push(thread);
        (previous, at) = (Some(thread), links.next());
    }
    order
}

#[test]
fn threads_join_at_the_front_and_leave_from_anywhere() {
    let t = ThreadId::nth;
    let mut list = Fake {
        head: None,
        links: vec![MemberLinks::NONE; 4],
    };
    for n in 0..4 {
        join(&mut list, t(n));
    }
    assert_eq!(walk(&list), [t(3), t(2), t(1), t(0)]);
    leave(&mut list, t(2));
    assert_eq!(walk(&list), [t(3), t(1), t(0)]);
    assert_eq!(list.links[t(2).index()], MemberLinks::NONE);
    leave(&mut list, t(3));
    assert_eq!(walk(&list), [t(1), t(0)]);
    leave(&mut list, t(0));
    assert_eq!(walk(&list), [t(1)]);
    leave(&mut list, t(1));
    assert_eq!(list.head, None);
}

#[test]
fn a_list_the_object_does_not_have_takes_no_thread() {
    struct NoList(MemberLinks);
    impl MemberList for NoList {
        fn head(&mut self) -> Option<&mut Option<ThreadId>> {
            None
        }
        fn links(&mut self, _: ThreadId) -> &mut MemberLinks {
            &mut self.0
        }
    }
    let mut list = NoList(MemberLinks::NONE);
    join(&mut list, ThreadId::nth(0));
    assert_eq!(list.0, MemberLinks::NONE);
}
