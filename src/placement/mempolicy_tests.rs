//! Unit tests of the memory policy parser and the syscall wrappers.

use super::*;
use proptest::prelude::*;

fn set(s: &str) -> NodeSet {
    NodeSet::parse_list(s).unwrap()
}

fn reason(s: &str) -> String {
    MemPolicy::parse(s).unwrap_err().reason
}

#[test]
fn formats_and_parses_every_mode() {
    let cases = [
        (MemPolicy::Default, "default"),
        (MemPolicy::Local, "local"),
        (MemPolicy::Preferred(1), "preferred:1"),
        (MemPolicy::PreferredMany(set("0-1")), "preferred-many:0-1"),
        (MemPolicy::Bind(set("0-1")), "bind:0-1"),
        (MemPolicy::Interleave(set("0,2")), "interleave:0,2"),
        (
            MemPolicy::WeightedInterleave(set("0-3")),
            "weighted-interleave:0-3",
        ),
    ];
    for (policy, text) in cases {
        assert_eq!(policy.to_string(), text);
        assert_eq!(MemPolicy::parse(text).unwrap(), policy, "{text}");
    }
    assert_eq!(
        MemPolicy::parse("  Bind: 1,0 ").unwrap(),
        MemPolicy::Bind(set("0-1"))
    );
    assert_eq!(
        "interleave:0-7:2/4".parse::<MemPolicy>().unwrap(),
        MemPolicy::Interleave(set("0-1,4-5"))
    );
}

#[test]
fn rejections_name_the_rule() {
    let e = MemPolicy::parse("preferred:0,1").unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid memory policy 'preferred:0,1': 'preferred' takes exactly one node \
         (got 2); use 'preferred-many:0,1' or 'bind:0,1'"
    );
    assert!(reason("preferred").contains("needs a node list"));
    assert!(reason("bind").contains("'bind' needs a node list"));
    assert!(reason("bind:").contains("needs at least one node"));
    assert!(reason("interleave:0-").contains("'interleave' takes a node list"));
    assert!(reason("default:0").contains("'default' takes no nodes"));
    assert!(reason("local:1").contains("use 'bind:1'"));
    assert!(reason("membind:0").contains("did you mean 'bind'?"));
    assert!(reason("spread:0").contains("unknown mode 'spread'"));
    assert!(reason("").contains("empty"));
}

#[test]
fn json_is_the_text_form() {
    let p = MemPolicy::Interleave(set("0,2"));
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(json, "\"interleave:0,2\"");
    assert_eq!(serde_json::from_str::<MemPolicy>(&json).unwrap(), p);
    assert!(serde_json::from_str::<MemPolicy>("\"preferred:0-1\"").is_err());
}

#[test]
fn targets() {
    assert_eq!(MemPolicy::Local.target_nodes(), None);
    assert_eq!(MemPolicy::Preferred(3).target_nodes(), Some(set("3")));
    assert_eq!(MemPolicy::Bind(set("0-1")).mode(), libc::MPOL_BIND);
}

#[test]
fn thread_policy_round_trips_through_the_kernel() {
    std::thread::spawn(|| {
        let node0 = sys::online_nodes().first().unwrap();
        assert_eq!(get_thread_policy().unwrap(), MemPolicy::Default);
        for policy in [
            MemPolicy::Bind(NodeSet::from_ids([node0])),
            MemPolicy::Interleave(NodeSet::from_ids([node0])),
            MemPolicy::Preferred(node0),
            MemPolicy::Local,
        ] {
            assert_eq!(set_thread_policy(&policy).unwrap(), policy);
            assert_eq!(get_thread_policy().unwrap(), policy);
        }
        // Linux 5.15+ has preferred-many; older kernels get preferred.
        let many = MemPolicy::PreferredMany(NodeSet::from_ids([node0]));
        let applied = set_thread_policy(&many).unwrap();
        assert_eq!(get_thread_policy().unwrap(), applied);
        assert_eq!(
            set_thread_policy(&MemPolicy::Default).unwrap(),
            MemPolicy::Default
        );
        assert_eq!(get_thread_policy().unwrap(), MemPolicy::Default);
    })
    .join()
    .unwrap();
}

#[test]
fn offline_nodes_are_refused_with_the_online_list() {
    let online = sys::online_nodes();
    let missing = online.end();
    let policy = MemPolicy::Bind(NodeSet::from_ids([missing]));
    let e = set_thread_policy(&policy).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    let msg = e.to_string();
    assert!(
        msg.contains(&format!(
            "node {missing} is not online (online nodes: {online})"
        )),
        "{msg}"
    );
    assert!(msg.starts_with(&format!("set_mempolicy(policy=bind:{missing}) failed")));
    // A mask mixing online and offline nodes is refused too rather than
    // silently narrowed.
    let mut mixed = online.clone();
    mixed.insert(missing);
    assert!(set_thread_policy(&MemPolicy::Interleave(mixed)).is_err());
}

#[test]
fn the_kernel_itself_refuses_an_offline_node() {
    // Bypasses the check above, to confirm the kernel agrees with it.
    let missing = sys::online_nodes().end();
    let mask = NodeSet::from_ids([missing]).to_words(sys::nodemask_words());
    let e = sys::set_mempolicy(sys::MPOL_BIND, &mask).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    let hint = hint_for(Target::Thread, &MemPolicy::Preferred(missing), &e).unwrap();
    assert!(hint.contains("not online"), "{hint}");
}

#[test]
fn weighted_interleave_works_or_says_the_kernel_lacks_it() {
    std::thread::spawn(|| {
        let node0 = sys::online_nodes().first().unwrap();
        let policy = MemPolicy::WeightedInterleave(NodeSet::from_ids([node0]));
        match set_thread_policy(&policy) {
            Ok(applied) => {
                assert!(weighted_interleave_supported());
                assert_eq!(applied, policy);
                assert_eq!(get_thread_policy().unwrap(), policy);
                set_thread_policy(&MemPolicy::Default).unwrap();
            }
            Err(e) => {
                assert!(!weighted_interleave_supported());
                assert!(
                    e.to_string().contains("not supported by this kernel"),
                    "{e}"
                );
            }
        }
    })
    .join()
    .unwrap();
}

#[test]
fn misaligned_range_names_the_alignment() {
    let v = vec![0u8; 3 * crate::sys::mmap::base_page_size()];
    let addr = v.as_ptr() as usize | 1;
    let e = bind_range(addr, 64, &MemPolicy::Local, MbindFlags::default()).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    assert!(e.to_string().contains("not aligned"), "{e}");
    assert!(
        e.to_string().starts_with("mbind(len=64 B, policy=local)"),
        "{e}"
    );
}

proptest! {
    #[test]
    fn parser_never_panics(text in "\\PC{0,40}") {
        let _ = MemPolicy::parse(&text);
    }

    #[test]
    fn valid_policies_round_trip(
        mode in 0usize..7,
        ids in proptest::collection::btree_set(0usize..300, 1..20),
    ) {
        let nodes = NodeSet::from_ids(ids.iter().copied());
        let policy = match mode {
            0 => MemPolicy::Default,
            1 => MemPolicy::Local,
            2 => MemPolicy::Preferred(*ids.iter().next().unwrap()),
            3 => MemPolicy::PreferredMany(nodes),
            4 => MemPolicy::Bind(nodes),
            5 => MemPolicy::Interleave(nodes),
            _ => MemPolicy::WeightedInterleave(nodes),
        };
        prop_assert_eq!(MemPolicy::parse(&policy.to_string()).unwrap(), policy);
    }
}
