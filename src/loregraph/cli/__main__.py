from loregraph.cli.main import app

app(prog_name="loregraph")
