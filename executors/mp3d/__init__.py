"""Shared by the navigation executors on the Matterport3D graphs (mapgpt, smartway, eqa);
not an executor itself. It holds the MatterSim-compatible simulator and its graph
backend (`sim`, `graph`), the 36-view sweep with caption observations (`panorama`),
the agent's body (`walker`: moving to a neighbour as MapGPT does), R2R's metrics
(`metrics`), the shortest-path teacher (`teacher`) and the R2R data set (`data_r2r`)."""

SHARED = True   # shared code, not an executor: any executor may use it, it uses none (tests/layering)
