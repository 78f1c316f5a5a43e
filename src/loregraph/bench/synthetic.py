"""Synthetic but realistic workloads for benchmarks: invented people, projects and organisations,
widely used tool names, and natural sentences about them."""

from __future__ import annotations

import random

FIRST = ["Amara", "Bilal", "Chen", "Dana", "Elif", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kalani", "Leona",
         "Mateo", "Nadia", "Oskar", "Paloma", "Quinn", "Rosa", "Sven", "Talia", "Umar", "Vera", "Wen", "Ximena",
         "Yusuf", "Zora", "Aiden", "Bea", "Cyrus", "Dilan", "Esme", "Felix", "Gita", "Hugo", "Ilse", "Joel"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Haddad", "Novak", "Tanaka", "Silva", "Kowalski", "Brennan", "Osei",
        "Varga", "Castillo", "Nakamura", "Petrov", "Iyer", "Fischer", "Duarte", "Kaur", "Larsen", "Adeyemi"]
PROJECT_A = ["Aurora", "Beacon", "Cobalt", "Delta", "Ember", "Falcon", "Granite", "Harbor", "Iris", "Juniper",
             "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pioneer", "Quartz", "Ridge", "Summit", "Tundra"]
PROJECT_B = ["platform", "pipeline", "portal", "engine", "gateway", "tracker", "console", "service", "hub", "suite"]
ORGS = ["Brightwave", "Copperleaf", "Driftwood Labs", "Evergreen Systems", "Foxglove", "Graystone Bank",
        "Helix Health", "Ironbridge", "Juniper Retail", "Kiteline", "Lakeshore Media", "Moonrise Games"]
TOOLS = ["PostgreSQL", "MySQL", "SQLite", "Redis", "Kafka", "RabbitMQ", "Elasticsearch", "MongoDB", "Docker",
         "Kubernetes", "Terraform", "Ansible", "Jenkins", "GitHub Actions", "Grafana", "Prometheus", "Datadog",
         "Sentry", "React", "Vue", "Svelte", "Angular", "Django", "Flask", "FastAPI", "Rails", "Spring Boot",
         "Node.js", "Go", "Rust", "Python", "TypeScript", "Java", "Kotlin", "Swift", "pandas", "NumPy",
         "PyTorch", "TensorFlow", "scikit-learn", "Airflow", "dbt", "Snowflake", "BigQuery", "Spark", "Figma",
         "Jira", "Linear", "Notion", "Confluence", "Slack", "AWS Lambda", "S3", "Cloudflare", "Nginx"]
TEMPLATES = [
    ("USES", "{s} uses {o} for the {p} work"),
    ("USES", "{s} relies on {o} every day"),
    ("PREFERS", "{s} prefers {o} over the alternatives"),
    ("WORKS_ON", "{s} works on the {o} project"),
    ("WORKS_WITH", "{s} works with {o} on {p}"),
    ("KNOWS", "{s} knows {o} from a previous job"),
    ("DEPENDS_ON", "{s} depends on {o} in production"),
    ("PART_OF", "{s} is part of {o}"),
    ("DECIDED", "{s} decided to adopt {o} for {p}"),
]


class World:
    """A deterministic universe of names."""

    def __init__(self, seed: int = 7):
        rng = random.Random(seed)
        self.rng = rng
        self.people = [f"{f} {la}" for f in FIRST for la in LAST]
        rng.shuffle(self.people)
        self.projects = [f"{a} {b}" for a in PROJECT_A for b in PROJECT_B]
        rng.shuffle(self.projects)
        self.orgs = list(ORGS)
        self.tools = list(TOOLS)

    def fact(self) -> tuple[str, str, str, str, str, str]:
        """(source, source_type, type, target, target_type, text)."""
        rng = self.rng
        rtype, tmpl = rng.choice(TEMPLATES)
        s = rng.choice(self.people) if rtype != "DEPENDS_ON" else rng.choice(self.projects)
        st = "person" if rtype != "DEPENDS_ON" else "project"
        if rtype in ("USES", "PREFERS", "DEPENDS_ON", "DECIDED"):
            o, ot = rng.choice(self.tools), "tool"
        elif rtype == "WORKS_ON":
            o, ot = rng.choice(self.projects), "project"
        elif rtype == "PART_OF":
            o, ot = rng.choice(self.orgs), "organization"
        else:
            o, ot = rng.choice(self.people), "person"
        return s, st, rtype, o, ot, tmpl.format(s=s, o=o, p=rng.choice(self.projects))

    def question(self) -> str:
        rng = self.rng
        forms = [
            lambda: f"What does {rng.choice(self.people)} use?",
            lambda: f"Who works on {rng.choice(self.projects)}?",
            lambda: f"Which database does {rng.choice(self.projects)} depend on?",
            lambda: f"Who prefers {rng.choice(self.tools)}?",
            lambda: f"Who is part of {rng.choice(self.orgs)}?",
            lambda: f"Who decided to adopt {rng.choice(self.tools)}?",
            lambda: f"Who does {rng.choice(self.people)} work with?",
        ]
        return rng.choice(forms)()

    def messages(self, n: int) -> list[str]:
        rng = self.rng
        forms = [
            lambda: f"I'm using {rng.choice(self.tools)} for project {rng.choice(PROJECT_A)} with my colleague "
                    f"{rng.choice(FIRST)}.",
            lambda: f"Project {rng.choice(PROJECT_A)} stores everything in {rng.choice(self.tools)}.",
            lambda: f"I prefer {rng.choice(self.tools)} over {rng.choice(self.tools)} for most things.",
            lambda: f"{rng.choice(FIRST)} works at {rng.choice(self.orgs)} on the data team.",
            lambda: f"We switched from {rng.choice(self.tools)} to {rng.choice(self.tools)} last month.",
            lambda: f"I don't use {rng.choice(self.tools)} anymore.",
            lambda: f"My manager {rng.choice(FIRST)} approved the budget for {rng.choice(PROJECT_A)}.",
            lambda: "Thanks, that helps a lot!",
            lambda: f"I might try {rng.choice(self.tools)} at some point.",
            lambda: f"{rng.choice(FIRST)} and I started a new project called {rng.choice(PROJECT_A)}.",
        ]
        return [rng.choice(forms)() for _ in range(n)]
