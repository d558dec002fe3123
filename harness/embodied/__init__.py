"""What the robot-arm executors (manipulation on robosuite, libero) share, so neither
imports the other: the voxel workspace and its value maps (`voxels`), language-model
programs run in the sandbox (`lmp`, VoxPoser's LMPs), and openpi's observation format
(`openpi_format`). Nothing here imports a simulator."""
