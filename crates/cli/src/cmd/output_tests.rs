use super::*;

fn args(output: &[&str], format: Option<FormatArg>) -> OutputArgs {
    OutputArgs {
        output: output.iter().map(PathBuf::from).collect(),
        format,
    }
}

const MEM_LIKE: &[Format] = &[Format::Text, Format::Json, Format::Csv];

#[test]
fn aliases_map_onto_the_plan() {
    let plan = args(&[], None)
        .plan_formats(
            MEM_LIKE,
            Aliases {
                csv: true,
                ..Aliases::default()
            },
        )
        .unwrap();
    assert_eq!(plan.stdout, Format::Csv);
    let plan = args(&["/tmp/a.csv", "/tmp/b.JSON"], None)
        .plan_formats(
            MEM_LIKE,
            Aliases {
                json: true,
                ..Aliases::default()
            },
        )
        .unwrap();
    assert_eq!(plan.stdout, Format::Json);
    assert_eq!(
        plan.files,
        vec![
            (PathBuf::from("/tmp/a.csv"), Format::Csv),
            (PathBuf::from("/tmp/b.JSON"), Format::Json)
        ]
    );
    let svg = Path::new("/tmp/chart.svg");
    let err = args(&[], None)
        .plan_formats(
            MEM_LIKE,
            Aliases {
                svg: Some(svg),
                ..Aliases::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--svg: no svg output for this command; it writes text (.txt), json (.json), csv (.csv)"
    );
}

#[test]
fn format_without_files_is_stdout_and_with_files_is_theirs() {
    let plan = args(&[], Some(FormatArg::Json))
        .plan_formats(MEM_LIKE, Aliases::default())
        .unwrap();
    assert_eq!((plan.stdout, plan.files.len()), (Format::Json, 0));
    let plan = args(&["/tmp/out.txt"], Some(FormatArg::Csv))
        .plan_formats(MEM_LIKE, Aliases::default())
        .unwrap();
    assert_eq!(plan.stdout, Format::Text);
    assert_eq!(plan.files, vec![(PathBuf::from("/tmp/out.txt"), Format::Csv)]);
}

#[test]
fn empty_or_directory_names_are_refused_by_the_parser() {
    assert!(output_path("").is_err());
    assert!(output_path("dir/").is_err());
    assert!(output_path("..").is_err());
    assert!(output_path("r.json").is_ok());
}
