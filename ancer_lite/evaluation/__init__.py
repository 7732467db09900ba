"""Layer 4: metrics (certified accuracy, ACR, ACR~), superset statistics, verification inside certified regions
and exact 2D regions. Imports the layers below."""
