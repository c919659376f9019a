# boolbench: regenerate the BoolQuestions benchmark (see README.md for the pipeline).
# Run from this folder: `snakemake --cores all` (profiles/default is picked up automatically).
# `--configfile my.yaml` replaces config.yaml entirely instead of being merged into it.
# Then `snakemake --report report.html` (or report.zip) builds the HTML report.
from snakemake.utils import min_version

# pyproject's snakemake>=9.17: profiles, executor plugins, `localrule:` and priority functions
# (the clustering encoder's encoding, rules/encode.smk) as used here.
min_version("9.17")


include: "rules/common.smk"
include: "rules/corpus.smk"
include: "rules/encode.smk"
include: "rules/cluster.smk"
include: "rules/candidates.smk"
include: "rules/generate.smk"
include: "rules/dataset.smk"
include: "rules/evaluate.smk"
include: "rules/baselines.smk"
include: "rules/report.smk"


report: "report/workflow.rst"


rule all:
    default_target: True
    input:
        expand(artifact("dataset"), corpus=CORPORA),
        expand(artifact("table1_md"), corpus=CORPORA),
        expand(artifact("table2_md"), corpus=CORPORA),
        expand(artifact("document_recall_md"), corpus=CORPORA),
        expand(artifact("table3_md"), corpus=CORPORA),
        [report_inputs(corpus) for corpus in CORPORA],
        [interchange_outputs(corpus) for corpus in CORPORA],
        [extraction_quality_outputs(corpus) for corpus in CORPORA],


# Jobs name the rule that makes a corrupt input artifact, and docs/artifacts.md each artifact's
# rule and script (boolbench/artifacts.py).
export_rules((rule.name, rule.output, rule.script) for rule in workflow.rules)
