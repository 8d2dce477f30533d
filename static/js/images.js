// zrviz
