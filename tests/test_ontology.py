"""The ontology as other tools read it: an OWL 2 DL reasoner (HermiT), OWL-RL over it plus
data shaped as Linked Papers with Code publishes it, and its declarations."""
import os
import shutil

import owlrl
import pytest
from rdflib import Graph, Literal, Namespace, URIRef
from rdflib.namespace import OWL, RDF, RDFS, XSD

from kg.rdf.namespace import KG, ontology_dir

LPWCC = Namespace("https://linkedpaperswithcode.com/class/")
LPWCP = Namespace("https://linkedpaperswithcode.com/property/")
SCHEMA = Namespace("https://schema.org/")
R = Namespace("https://linkedpaperswithcode.com/")
#: The datatypes of the OWL 2 datatype map (OWL 2 Structural Specification, section 4) this
#: ontology may use.
OWL2_DATATYPES = {XSD[t] for t in ("string", "integer", "nonNegativeInteger", "decimal", "double", "float",
                                   "boolean", "anyURI", "dateTime", "int", "long")} | {RDF.PlainLiteral}


def ontology() -> Graph:
    return Graph().parse(ontology_dir() / "kg.ttl")


def lpwc_shaped() -> Graph:
    """A paper, an evaluation, a model and a repository-references node as LPWC publishes them."""
    g = Graph()
    paper, ev, rr = R["paper/p1"], R["evaluation/e1"], R["repositoryreferences/r1"]
    task, method, model, ds, repo = R["task/t"], R["method/m"], R["model/md"], R["dataset/d"], R["repository/x"]
    g.add((paper, RDF.type, LPWCC.paper))
    g.add((paper, LPWCP.hasTask, task))
    g.add((paper, LPWCP.hasMethod, method))
    g.add((paper, LPWCP.usesDataset, ds))
    g.add((paper, LPWCP.hasEvaluation, ev))
    g.add((paper, LPWCP.hasRepositoryReferences, rr))
    g.add((paper, LPWCP.hasOfficialRepository, repo))
    g.add((ev, RDF.type, LPWCC.evaluation))
    g.add((ev, LPWCP.hasTask, task))
    g.add((ev, LPWCP.hasModel, model))
    g.add((ev, LPWCP.hasDataset, ds))
    g.add((rr, RDF.type, LPWCC.repositoryreferences))
    g.add((rr, LPWCP.hasRepository, repo))
    g.add((rr, LPWCP.paperMentionsRepository, Literal(True)))
    for node, cls in ((task, LPWCC.task), (method, LPWCC.method), (model, LPWCC.model), (ds, LPWCC.dataset),
                      (repo, LPWCC.repository)):
        g.add((node, RDF.type, cls))
    return g


def test_owl_rl_over_lpwc_shaped_data_infers_no_false_type():
    g = ontology() + lpwc_shaped()
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    assert set(g.subjects(RDF.type, KG.Paper)) == {R["paper/p1"]}
    assert set(g.subjects(RDF.type, KG.Method)) == {R["method/m"], R["model/md"]}  # LPWC's methods and models
    for node in (R["evaluation/e1"], R["repositoryreferences/r1"]):  # no type of ours at all
        assert [t for t in g.objects(node, RDF.type) if str(t).startswith(str(KG))] == []
    assert list(g.subjects(RDF.type, OWL.Nothing)) == []


def test_our_data_reads_as_schema_org_and_lpwc():
    paper, task, venue = URIRef("urn:kg:p"), URIRef("urn:kg:t"), URIRef("urn:kg:v")
    g = ontology()
    for t in ((paper, RDF.type, KG.Paper), (task, RDF.type, KG.Task), (venue, RDF.type, KG.Venue),
              (paper, KG.addressesTask, task), (paper, KG.publishedIn, venue)):
        g.add(t)
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics).expand(g)
    assert (paper, RDF.type, SCHEMA.ScholarlyArticle) in g and (paper, RDF.type, LPWCC.paper) in g
    assert (paper, LPWCP.hasTask, task) in g and (paper, SCHEMA.about, task) in g
    # schema:publication goes from a CreativeWork to a PublicationEvent
    assert (paper, SCHEMA.publication, venue) in g and (venue, RDF.type, SCHEMA.PublicationEvent) in g


def test_every_term_the_axioms_name_is_declared_once_and_datatypes_are_owl2():
    g = ontology()
    kinds = {}
    for kind in (OWL.Class, OWL.ObjectProperty, OWL.DatatypeProperty, OWL.AnnotationProperty):
        for s in g.subjects(RDF.type, kind):
            if isinstance(s, URIRef):
                kinds.setdefault(s, set()).add(kind)
    assert [s for s, k in kinds.items() if len(k) > 1] == []  # no IRI is two kinds of entity
    for a, b in ((RDFS.subClassOf, OWL.Class), (OWL.equivalentClass, OWL.Class)):
        for s, o in g.subject_objects(a):
            for x in (s, o):
                assert not isinstance(x, URIRef) or b in kinds.get(x, ()), f"{x} is not declared a class"
    props = {OWL.ObjectProperty, OWL.DatatypeProperty}
    for s, o in g.subject_objects(RDFS.subPropertyOf):
        assert kinds.get(s, set()) & props and kinds[s] == kinds.get(o), f"{s} and {o} are not the same kind"
    for p, rng in g.subject_objects(RDFS.range):
        if OWL.DatatypeProperty in kinds.get(p, ()):
            assert rng in OWL2_DATATYPES, f"{p} ranges over {rng}, outside the OWL 2 datatype map"


def test_hermit_classifies_the_ontology(tmp_path):
    """HermiT, an OWL 2 DL reasoner, loads and classifies the ontology: it refuses one
    outside OWL 2 DL's datatype map, and reports inconsistent classes."""
    if shutil.which("java") is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install a Java runtime for HermiT (see .ci/run)")
        pytest.skip("no Java runtime on this machine")
    owlready2 = pytest.importorskip("owlready2")
    path = tmp_path / "kg.owl"
    ontology().serialize(path, format="xml")
    world = owlready2.World()
    onto = world.get_ontology(path.as_uri()).load()
    with onto:
        owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    assert list(world.inconsistent_classes()) == []
    # and it would refuse a datatype outside the map
    bad = ontology()
    bad.set((KG.year, RDFS.range, XSD.gYear))
    bad.serialize(tmp_path / "bad.owl", format="xml")
    world = owlready2.World()
    onto = world.get_ontology((tmp_path / "bad.owl").as_uri()).load()
    with pytest.raises(Exception):
        with onto:
            owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
