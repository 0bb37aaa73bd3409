"""`lethe mcp`: Lethe's memory as tools for an agent, over the Model Context Protocol."""
